//! The results: one row per resource and workload case, printed as a table row as soon as
//! it is measured and written together as JSON.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::cli::Workload;
use crate::workloads::Sample;
use crate::MIB;

/// One cell of the table.
pub struct Row {
    pub resource: String,
    pub workload: Workload,
    /// Which case of the workload (its parameters), shown after its name; may be empty.
    pub case: String,
    pub sample: Sample,
    pub note: String,
    /// More JSON fields (name, JSON value), as fragmentation's outcome.
    pub extra: Vec<(&'static str, String)>,
}

impl Row {
    /// A row without note or extra fields.
    pub fn new(resource: &str, workload: Workload, case: String, sample: Sample) -> Row {
        Row {
            resource: resource.into(),
            workload,
            case,
            sample,
            note: String::new(),
            extra: Vec::new(),
        }
    }

    /// The table's workload column: the workload's name and the case.
    pub fn label(&self) -> String {
        if self.case.is_empty() {
            self.workload.name().to_string()
        } else {
            format!("{} {}", self.workload.name(), self.case)
        }
    }
}

pub fn ns_per_op(s: &Sample) -> f64 {
    if s.ops > 0 {
        s.seconds * 1e9 / s.ops as f64
    } else {
        0.0
    }
}

/// The counts per operation that the table and the JSON show, by JSON name.
fn per_op(s: &Sample) -> [(&'static str, f64); 8] {
    let c = &s.counters;
    let n = s.counted_ops.max(1) as f64;
    [
        ("runtime_calls_per_op", c.runtime_calls() as f64 / n),
        ("events_recorded_per_op", c.events_recorded as f64 / n),
        ("events_waited_per_op", c.events_waited as f64 / n),
        ("steals_per_op", c.steals as f64 / n),
        ("upstream_calls_per_op", c.upstream_calls() as f64 / n),
        ("lock_waits_per_op", c.lock_waits as f64 / n),
        ("sync_fallbacks_per_op", c.sync_fallbacks as f64 / n),
        ("front_hits_per_op", c.front_hits as f64 / n),
    ]
}

/// A count per operation in at most 8 characters: exact zero as `0`, small rates in
/// scientific notation so they do not read as zero.
fn rate(x: f64) -> String {
    if x == 0.0 {
        "0".into()
    } else if x >= 100.0 {
        format!("{x:.0}")
    } else if x >= 0.01 {
        format!("{x:.3}")
    } else {
        format!("{x:.1e}")
    }
}

pub fn print_header() {
    println!(
        "\n{:<12} {:<32} {:>10} {:>10} {:>12} {:>12} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8}  note",
        "resource",
        "workload",
        "total ms",
        "ns/op",
        "peak up MiB",
        "peak live MiB",
        "rt/op",
        "rec/op",
        "wait/op",
        "steal/op",
        "up/op",
        "lockw/op",
        "front/op"
    );
}

pub fn print_row(r: &Row) {
    let mut note = r.note.clone();
    if r.sample.failures > 0 {
        let _ = write!(note, " ({} allocation failures)", r.sample.failures);
    }
    let c = &r.sample.counters;
    if c.sync_fallbacks > 0 {
        let _ = write!(
            note,
            " ({} device synchronizations instead of event waits)",
            c.sync_fallbacks
        );
    }
    let p = per_op(&r.sample);
    println!(
        "{:<12} {:<32} {:>10.1} {:>10.1} {:>12.1} {:>12.1} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8}  {}",
        r.resource,
        r.label(),
        r.sample.seconds * 1e3,
        ns_per_op(&r.sample),
        r.sample.peak_upstream as f64 / MIB as f64,
        r.sample.peak_live as f64 / MIB as f64,
        rate(p[0].1),
        rate(p[1].1),
        rate(p[2].1),
        rate(p[3].1),
        rate(p[4].1),
        rate(p[5].1),
        rate(p[7].1),
        note.trim_start()
    );
    use std::io::Write as _;
    let _ = std::io::stdout().flush();
}

/// The rows as a JSON list: one object per row, `workload` its name and `case` the case.
pub fn json(rows: &[Row]) -> String {
    let mut out = String::from("[\n");
    for (i, r) in rows.iter().enumerate() {
        let ns = ns_per_op(&r.sample);
        let mut m = BTreeMap::new();
        m.insert("resource", format!("{:?}", r.resource));
        m.insert("workload", format!("{:?}", r.workload.name()));
        m.insert("case", format!("{:?}", r.case));
        m.insert("seconds", format!("{}", r.sample.seconds));
        m.insert("operations", format!("{}", r.sample.ops));
        m.insert("ns_per_op", format!("{ns}"));
        m.insert("peak_upstream_bytes", format!("{}", r.sample.peak_upstream));
        m.insert("peak_live_bytes", format!("{}", r.sample.peak_live));
        m.insert("failures", format!("{}", r.sample.failures));
        m.insert("note", format!("{:?}", r.note));
        m.insert("counted_operations", format!("{}", r.sample.counted_ops));
        for (k, v) in per_op(&r.sample) {
            m.insert(k, format!("{v}"));
        }
        let counts: Vec<String> = r
            .sample
            .counters
            .fields()
            .iter()
            .map(|(k, v)| format!("\"{k}\": {v}"))
            .collect();
        m.insert("counters", format!("{{{}}}", counts.join(", ")));
        for (k, v) in &r.extra {
            m.insert(k, v.clone());
        }
        let fields: Vec<String> = m.iter().map(|(k, v)| format!("\"{k}\": {v}")).collect();
        let _ = writeln!(
            out,
            "  {{{}}}{}",
            fields.join(", "),
            if i + 1 < rows.len() { "," } else { "" }
        );
    }
    out.push_str("]\n");
    out
}
