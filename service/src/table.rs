//! Tables of results: aligned text for terminals, CSV for files (the CLI's and the web
//! UI's downloads).

use serde_json::Value;

/// Two aligned columns: each key of a flat JSON object and its value.
pub fn key_values(object: &Value) -> String {
    let Some(map) = object.as_object() else {
        return format!("{object}\n");
    };
    let width = map.keys().map(String::len).max().unwrap_or(0);
    map.iter()
        .filter(|(_, v)| !v.is_null())
        .map(|(k, v)| format!("  {k:<width$}  {}\n", scalar(v)))
        .collect()
}

/// A JSON scalar as a person reads it: numbers compactly, strings without quotes.
pub fn scalar(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Number(n) => match n.as_f64() {
            Some(x) if x != 0.0 && (x.abs() >= 1e7 || x.abs() < 1e-3) => format!("{x:.6e}"),
            Some(x) if x.fract() == 0.0 => format!("{x}"),
            Some(x) => format!("{x:.6}"),
            None => n.to_string(),
        },
        other => other.to_string(),
    }
}

/// Runs as the API lists them (`GET /api/runs`), as CSV: one row per run with its id,
/// status, labels (`label:NAME`), variables, overall time, energy, failure chance and error,
/// the rows in the order of their label columns, then their variable columns, left to right
/// (numbers in numeric order, before any text; the id breaks ties): the server lists a
/// sweep's runs in the order they were created, which says nothing of their values.
pub fn runs_csv(runs: &[Value]) -> String {
    let keys = |field: &str| -> Vec<String> {
        let mut keys: Vec<String> = runs
            .iter()
            .flat_map(|r| r[field].as_object().into_iter().flat_map(|o| o.keys().cloned()))
            .collect();
        keys.sort();
        keys.dedup();
        keys
    };
    let (labels, variables) = (keys("labels"), keys("variables"));
    let mut runs = runs.to_vec();
    order_rows(&mut runs, &labels, &variables);
    let mut header: Vec<String> = vec!["id".into(), "status".into()];
    header.extend(labels.iter().map(|l| format!("label:{l}")));
    header.extend(variables.iter().cloned());
    header.extend(["overall_time", "total_energy", "failure_chance", "error"].map(String::from));
    let mut out = header.join(",") + "\n";
    for r in &runs {
        let mut row: Vec<String> = vec![csv_cell(&r["id"]), csv_cell(&r["status"])];
        row.extend(labels.iter().map(|l| csv_cell(&r["labels"][l])));
        row.extend(variables.iter().map(|v| csv_cell(&r["variables"][v])));
        for k in ["overall_time", "total_energy", "failure_chance"] {
            row.push(csv_cell(&r["result"][k]));
        }
        row.push(csv_cell(&r["error"]));
        out += &row.join(",");
        out.push('\n');
    }
    out
}

fn order_rows(runs: &mut [Value], labels: &[String], variables: &[String]) {
    runs.sort_by(|a, b| {
        let cells = labels
            .iter()
            .map(|l| (&a["labels"][l], &b["labels"][l]))
            .chain(variables.iter().map(|v| (&a["variables"][v], &b["variables"][v])));
        cells
            .map(|(x, y)| compare_cells(x, y))
            .find(|o| o.is_ne())
            .unwrap_or_else(|| a["id"].as_str().cmp(&b["id"].as_str()))
    });
}

/// Orders the values of one input: numbers by value, before texts by text.
pub fn compare_cells(a: &Value, b: &Value) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => x.total_cmp(&y),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => csv_cell(a).cmp(&csv_cell(b)),
    }
}

/// A JSON value as text: a string without quotes, null as nothing, the rest as JSON.
pub fn plain(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// A JSON value as one CSV cell, quoted where it must be.
pub fn csv_cell(v: &Value) -> String {
    hetsim_scripting::report::csv_text(&plain(v)).into_owned()
}

/// Processes as CSV, the columns of `hetsim run --csv --detail processes`.
pub fn processes_csv(processes: &[hetsim_simulator::ProcessResult]) -> String {
    let mut out = Vec::new();
    // Writing to a Vec cannot fail.
    let _ = hetsim_scripting::report::write_processes_csv(processes, &mut out);
    String::from_utf8_lossy(&out).into_owned()
}
