//! The report: the data the page's script reads (the model in columns), embedded with the
//! page's script and style (assets/, this program's only page) in one HTML file.

use serde_json::{json, Value};

use crate::model::{peak_live, Alloc, Model};

const TEMPLATE: &str = include_str!("assets/report.html");
const STYLE: &str = include_str!("assets/report.css");
const SCRIPT: &str = include_str!("assets/report.js");

/// An address as the page shows it.
pub fn hex(v: u64) -> String {
    format!("{v:#x}")
}

/// The data the page's script reads.
pub fn embedded(m: &Model, source: &str, max_bands: usize) -> Value {
    let a = &m.allocs;
    let col = |f: &dyn Fn(&Alloc) -> Value| a.iter().map(f).collect::<Vec<_>>();
    let live: Vec<&Alloc> = a.iter().filter(|x| x.end < 0).collect();
    let made: Vec<&Alloc> = a.iter().filter(|x| x.start >= 0).collect();
    let count = |k: u8| {
        m.marks
            .iter()
            .filter(|(_, e)| e.action.mark_code() == Some(k))
            .count()
    };
    let mut meta = m.doc_meta.clone();
    let extra = json!({
        "events": m.times.len(),
        "unknown_actions": m.unknown_actions,
        "stacks": m.stacks_seen,
        "allocations": made.len(),
        "allocated_bytes": made.iter().map(|x| x.size).sum::<u64>(),
        "frees": a.iter().filter(|x| x.end >= 0).count(),
        "allocations_before_window": a.len() - made.len(),
        "allocate_failed": count(0),
        "free_failed": count(1),
        "grows": count(2),
        "releases": count(3),
        "peak_live": peak_live(m),
        "live_count": live.len(),
        "live_bytes": live.iter().map(|x| x.size).sum::<u64>(),
        "segment_bytes": m.segments.iter().map(|s| s["size"].as_u64().unwrap_or(0)).sum::<u64>(),
        "segment_free_bytes": m.segments.iter().map(|s| s["free"].as_u64().unwrap_or(0)).sum::<u64>(),
    });
    if let (Value::Object(meta), Value::Object(extra)) = (&mut meta, extra) {
        meta.extend(extra);
    }
    let t = &m.tables;
    json!({
        "format": "rmm-viz-data 1",
        "source": source,
        "max_bands": max_bands,
        "meta": meta,
        "times": m.times,
        "resources": t.resources.iter().map(|(n, id)| json!([n, hex(*id)])).collect::<Vec<_>>(),
        "streams": t.streams.iter().map(|s| hex(*s)).collect::<Vec<_>>(),
        "frames": t.frames.iter().map(|(f, file, line)| json!([f, file, line])).collect::<Vec<_>>(),
        "stacks": t.stacks,
        "allocs": {
            "start": col(&|x| json!(x.start)),
            "end": col(&|x| json!(x.end)),
            "size": col(&|x| json!(x.size)),
            "addr": col(&|x| json!(hex(x.addr))),
            "stream": col(&|x| json!(x.stream)),
            "device": col(&|x| json!(x.device)),
            "res": col(&|x| json!(x.res)),
            "thread": col(&|x| json!(x.thread)),
            "stack": col(&|x| json!(x.stack)),
            "seq": col(&|x| json!(x.seq)),
            "t": col(&|x| json!(x.t)),
            "live": col(&|x| json!(u8::from(x.live))),
        },
        "marks": {
            "at": m.marks.iter().map(|(i, _)| *i).collect::<Vec<_>>(),
            "kind": m.marks.iter().map(|(_, e)| e.action.mark_code()).collect::<Vec<_>>(),
            "size": m.marks.iter().map(|(_, e)| e.size).collect::<Vec<_>>(),
            "addr": m.marks.iter().map(|(_, e)| hex(e.addr)).collect::<Vec<_>>(),
            "res": m.marks.iter().map(|(_, e)| e.res).collect::<Vec<_>>(),
            "stream": m.marks.iter().map(|(_, e)| e.stream).collect::<Vec<_>>(),
            "thread": m.marks.iter().map(|(_, e)| e.thread).collect::<Vec<_>>(),
            "stack": m.marks.iter().map(|(_, e)| e.stack).collect::<Vec<_>>(),
        },
        "segments": m.segments,
        "block_states": m.block_states,
    })
}

fn escape_html(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// The report: the template with its `{{NAME}}` slots filled. The data's `<` are written
/// as `\u003c` (the same JSON), so nothing in it can end its script element.
pub fn render(data: &Value, title: &str) -> String {
    let json = serde_json::to_string(data)
        .expect("a JSON value serializes")
        .replace('<', "\\u003c");
    let mut out = String::with_capacity(TEMPLATE.len() + STYLE.len() + SCRIPT.len() + json.len());
    let mut rest = TEMPLATE;
    while let Some(i) = rest.find("{{") {
        out.push_str(&rest[..i]);
        let j = rest[i..].find("}}").expect("a template slot ends with }}") + i;
        match &rest[i + 2..j] {
            "TITLE" => out.push_str(&escape_html(title)),
            "STYLE" => out.push_str(STYLE),
            "SCRIPT" => out.push_str(SCRIPT),
            "DATA" => out.push_str(&json),
            other => panic!("unknown template slot {other}"),
        }
        rest = &rest[j + 2..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::fixtures::{doc, ev};
    use crate::model::model;

    #[test]
    fn the_page_cannot_be_broken_out_of() {
        let mut d = doc(vec![ev(0, "allocate", 1, 1)], vec![]);
        d["events"][0]["frames"] =
            json!([{"function": "</script><script>alert(1)</script>", "file": null, "line": 1}]);
        let m = model(&d).unwrap();
        let html = render(&embedded(&m, "x.json", 10), "<b>t</b>");
        assert!(!html.contains("alert(1)</script>"));
        assert!(html.contains("&lt;b&gt;t&lt;/b&gt;"));
        // One script element for the data, one for the code; no template slot left.
        assert_eq!(html.matches("</script>").count(), 2);
        assert!(!html.contains("{{"));
        assert!(!SCRIPT.contains("</script") && !STYLE.contains("</style"));
    }
}
