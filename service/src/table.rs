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

/// A JSON scalar as a person reads it: numbers as [`number`] writes them, strings without
/// quotes.
pub fn scalar(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.as_f64().map_or_else(|| n.to_string(), number),
        other => other.to_string(),
    }
}

/// A number as every table of hetsim (the CLI's, the UI's) writes it: 6 significant digits,
/// no exponent from 10⁻³ up to 10⁶, `1e6` and `2.5e-6` beyond: so `1000000` and `1e8` never
/// share a column.
pub fn number(x: f64) -> String {
    // 999999.7 rounds to 1000000 at six digits: such a number is written as 1e6 is.
    let rounded = format!("{x:.5e}").parse::<f64>().unwrap_or(x);
    if x == 0.0 {
        "0".to_owned()
    } else if (1e-3..1e6).contains(&rounded.abs()) {
        let digits = (5 - x.abs().log10().floor() as i32).clamp(0, 9) as usize;
        let text = format!("{x:.digits$}");
        if text.contains('.') {
            text.trim_end_matches('0').trim_end_matches('.').to_owned()
        } else {
            text
        }
    } else {
        let text = format!("{x:.5e}");
        match text.split_once('e') {
            Some((mantissa, exponent)) if mantissa.contains('.') => {
                format!(
                    "{}e{exponent}",
                    mantissa.trim_end_matches('0').trim_end_matches('.')
                )
            }
            _ => text,
        }
    }
}

/// A duration in the unit that suits it (s from one second, then ms, µs, ns), its number
/// written by [`number`]: `8519.17 s`, not `8.51917e6 ms`.
pub fn duration(seconds: f64) -> String {
    let magnitude = seconds.abs();
    let (scale, unit) = if magnitude >= 1.0 || magnitude == 0.0 || !magnitude.is_finite() {
        (1.0, "s")
    } else if magnitude >= 1e-3 {
        (1e3, "ms")
    } else if magnitude >= 1e-6 {
        (1e6, "µs")
    } else {
        (1e9, "ns")
    };
    format!("{} {unit}", number(seconds * scale))
}

/// A rate of bytes per second in the decimal unit that suits it (B/s to TB/s).
pub fn byte_rate(bytes_per_second: f64) -> String {
    let units = [(1e12, "TB/s"), (1e9, "GB/s"), (1e6, "MB/s"), (1e3, "kB/s")];
    let (scale, unit) = units
        .into_iter()
        .find(|(scale, _)| bytes_per_second.abs() >= *scale)
        .unwrap_or((1.0, "B/s"));
    format!("{} {unit}", number(bytes_per_second / scale))
}

/// Runs as the API lists them (`GET /api/runs`), as CSV: one row per run with its id,
/// status, labels (`label:NAME`), variables, overall time, energy, failure chance and error,
/// the rows in the order of their label columns, then their variable columns, left to right
/// (numbers in numeric order, before any text; the id breaks ties): the server lists a
/// sweep's runs in the order they were created, which says nothing of their values.
pub fn runs_csv(runs: &[Value]) -> String {
    let (labels, variables) = (input_keys(runs, "labels"), input_keys(runs, "variables"));
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

/// Every key of object `field` (`labels`, `variables`) over the runs, sorted.
fn input_keys(runs: &[Value], field: &str) -> Vec<String> {
    let mut keys: Vec<String> = runs
        .iter()
        .flat_map(|r| r[field].as_object().into_iter().flat_map(|o| o.keys().cloned()))
        .collect();
    keys.sort();
    keys.dedup();
    keys
}

/// A sweep's runs as an aligned table for a terminal: short id, status, the inputs that vary
/// between the runs (every input when none varies), overall time and energy; ordered as
/// [`runs_csv`] orders them.
pub fn runs_table(runs: &[Value]) -> String {
    let varying = |field: &str| -> Vec<String> {
        input_keys(runs, field)
            .into_iter()
            .filter(|k| {
                runs.iter()
                    .any(|r| r[field][k.as_str()] != runs[0][field][k.as_str()])
            })
            .collect()
    };
    let (mut labels, mut variables) = (varying("labels"), varying("variables"));
    if labels.is_empty() && variables.is_empty() {
        (labels, variables) = (input_keys(runs, "labels"), input_keys(runs, "variables"));
    }
    let mut runs = runs.to_vec();
    order_rows(&mut runs, &labels, &variables);
    let mut rows: Vec<Vec<String>> = vec![["run", "status"].map(String::from).to_vec()];
    rows[0].extend(labels.iter().map(|l| format!("label:{l}")));
    rows[0].extend(variables.iter().cloned());
    rows[0].extend(["overall time [s]", "energy [J]"].map(String::from));
    for r in &runs {
        let id = plain(&r["id"]);
        let mut row = vec![id.chars().take(8).collect(), plain(&r["status"])];
        row.extend(labels.iter().map(|l| scalar(&r["labels"][l])));
        row.extend(variables.iter().map(|v| scalar(&r["variables"][v])));
        row.extend(["overall_time", "total_energy"].map(|k| match &r["result"][k] {
            Value::Null => plain(&r["error"]).lines().next().unwrap_or("").to_owned(),
            v => scalar(v),
        }));
        rows.push(row);
    }
    aligned(&rows)
}

/// Rows of cells as left-aligned columns, two spaces apart.
fn aligned(rows: &[Vec<String>]) -> String {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|t| t.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in rows {
        let cells: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(cell, &width)| format!("{cell:<width$}"))
            .collect();
        out += cells.join("  ").trim_end();
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn durations_and_rates_take_the_unit_that_suits_them() {
        assert_eq!(duration(8519.17), "8519.17 s");
        assert_eq!(duration(0.595696), "595.696 ms");
        assert_eq!(duration(2.5e-6), "2.5 µs");
        assert_eq!(duration(4e-9), "4 ns");
        assert_eq!(duration(0.0), "0 s");
        assert_eq!(byte_rate(12.3e9), "12.3 GB/s");
        assert_eq!(byte_rate(512.0), "512 B/s");
    }

    #[test]
    fn numbers_keep_six_significant_digits() {
        assert_eq!(number(0.595695981), "0.595696");
        assert_eq!(number(146.65), "146.65");
        assert_eq!(number(0.0), "0");
        assert_eq!(number(2.5e-6), "2.5e-6");
        assert_eq!(number(1.25e8), "1.25e8");
        assert_eq!(number(-3e-9), "-3e-9");
        assert_eq!(number(1234567.0), "1.23457e6");
        assert_eq!(number(999999.0), "999999");
        assert_eq!(number(999999.7), "1e6");
        assert_eq!(scalar(&json!(1e8)), "1e8");
        assert_eq!(scalar(&json!(1000000)), "1e6");
    }

    #[test]
    fn a_sweeps_table_lists_the_varied_inputs_in_their_order() {
        let run = |id: &str, block: i64, n: f64, t: f64| {
            json!({"id": id, "status": "done", "labels": {"GPU": 1},
                   "variables": {"blockSize": block, "numElements": n, "a": 1},
                   "result": {"overall_time": t, "total_energy": 2.0}})
        };
        let runs = [
            run("ffff0000-1", 256, 1e6, 0.003),
            run("0000ffff-2", 128, 1e8, 0.25),
            run("aaaa0000-3", 128, 1e6, 0.002),
        ];
        let table = runs_table(&runs);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(
            lines[0],
            "run       status  blockSize  numElements  overall time [s]  energy [J]"
        );
        assert_eq!(
            lines[1],
            "aaaa0000  done    128        1e6          0.002             2"
        );
        assert_eq!(
            lines[2],
            "0000ffff  done    128        1e8          0.25              2"
        );
        assert_eq!(
            lines[3],
            "ffff0000  done    256        1e6          0.003             2"
        );
    }
}
