//! A replay's results as JSON and as an SVG chart.

use std::fmt::Write as _;

use super::log::Plan;
use super::replay::Outcome;

/// The recorded log's figures and each configuration's outcome.
pub fn json(log: &str, plan: &Plan, skipped: usize, outcomes: &[Outcome]) -> String {
    let mut s = String::new();
    let esc = |t: &str| t.replace('\\', "\\\\").replace('"', "\\\"");
    let _ = write!(
        s,
        "{{\n  \"log\": \"{}\",\n  \"threads\": {},\n  \"recorded\": {{\"allocations\": {}, \
         \"total_bytes\": {}, \"peak_live\": {}, \"allocation_failures\": {}, \
         \"unmatched_frees\": {}, \"skipped_lines\": {}}},\n  \"results\": [",
        esc(log),
        plan.threads.len(),
        plan.allocations,
        plan.total_bytes,
        plan.recorded_peak_live,
        plan.recorded_failures,
        plan.unmatched_frees,
        skipped
    );
    for (i, o) in outcomes.iter().enumerate() {
        let _ = write!(
            s,
            "{}\n    {{\"resource\": \"{}\", \"seconds\": {:.6}, \"allocations\": {}, \
             \"frees\": {}, \"failures\": {}, \"total_bytes\": {}, \"peak_live\": {}, \
             \"peak_upstream\": {}}}",
            if i == 0 { "" } else { "," },
            esc(&o.spec),
            o.seconds,
            o.allocations,
            o.frees,
            o.failures,
            o.total_bytes,
            o.peak_live,
            o.peak_upstream
        );
    }
    s.push_str("\n  ]\n}\n");
    s
}

/// One chart per configuration, stacked: live bytes (blue) and upstream bytes (red) over
/// the event index. The gap between the lines is memory held but not in use.
pub fn svg(outcomes: &[Outcome]) -> String {
    let (w, h, pad) = (800.0f64, 240.0f64, 50.0f64);
    let total_h = h * outcomes.len().max(1) as f64;
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{total_h}\" \
         font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" \
         fill=\"white\"/>\n"
    );
    for (k, o) in outcomes.iter().enumerate() {
        let y0 = k as f64 * h;
        let n = o.samples.len().max(1) as f64;
        let ymax = o
            .samples
            .iter()
            .map(|x| x.1.max(x.2))
            .max()
            .unwrap_or(0)
            .max(1) as f64;
        let pt = |i: usize, v: usize| {
            let x = pad + (w - 2.0 * pad) * i as f64 / n;
            let y = y0 + h - pad + -(h - 2.0 * pad) * v as f64 / ymax;
            format!("{x:.1},{y:.1}")
        };
        let line = |sel: fn(&(usize, usize, usize)) -> usize| {
            // At most ~2000 points per line: enough to see fragmentation, small files.
            o.samples
                .iter()
                .enumerate()
                .step_by(o.samples.len() / 2000 + 1)
                .map(|(i, x)| pt(i, sel(x)))
                .collect::<Vec<_>>()
                .join(" ")
        };
        let _ = write!(
            s,
            "<text x=\"{pad}\" y=\"{:.1}\">{}: live (blue) and upstream (red) bytes vs event; \
             peak live {} B, peak upstream {} B</text>\n\
             <line x1=\"{pad}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"black\"/>\n\
             <line x1=\"{pad}\" y1=\"{:.1}\" x2=\"{pad}\" y2=\"{:.1}\" stroke=\"black\"/>\n\
             <text x=\"2\" y=\"{:.1}\">{:.1} MiB</text>\n\
             <polyline fill=\"none\" stroke=\"red\" points=\"{}\"/>\n\
             <polyline fill=\"none\" stroke=\"blue\" points=\"{}\"/>\n",
            y0 + 20.0,
            o.spec,
            o.peak_live,
            o.peak_upstream,
            y0 + h - pad,
            w - pad,
            y0 + h - pad,
            y0 + h - pad,
            y0 + pad,
            y0 + pad,
            ymax / (1u64 << 20) as f64,
            line(|x| x.2),
            line(|x| x.1),
        );
    }
    s.push_str("</svg>\n");
    s
}
