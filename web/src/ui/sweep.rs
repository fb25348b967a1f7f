//! `/sweeps/{id}`: a sweep's progress; a plot of a result against any varied input, one line
//! per value of a second, each other varied input fixed at one value or drawn as small
//! multiples ("all"), on linear or log axes; the table of every run with its inputs, sortable
//! by any column; the CSV.
//!
//! The query holds the choices: `x`, `by` (empty: one line), `y`, `scale` (`auto`, `linear`,
//! `log`), `fix.NAME` (a value, or `all`) for every other varied input, `sort` and `desc`
//! for the table. Without `fix.NAME` an input is fixed at its first value, so that a line
//! never zig-zags over an input the plot does not show.

use std::collections::{BTreeMap, HashMap};

use axum::extract::{Path, Query, State};
use axum::response::Redirect;
use maud::{html, Markup, PreEscaped};
use serde_json::Value;

use super::layout;
use super::lifecycle::{self, Target};
use super::overview::short;
use super::results::{num, REFRESH_SECONDS};
use super::{encode, PageResult};
use crate::error::ApiError;
use crate::state::AppState;
use hetsim_charts::Chart;
use hetsim_service::storage::RunRecord;
use hetsim_service::table::{compare_cells, plain};

/// Small multiples drawn at most; the page says how many more there are.
const MAX_PLOTS: usize = 24;

/// Runs the table lists at most (the page reloads while a sweep runs); the CSV has all.
const MAX_TABLE_ROWS: usize = 2_000;

/// The results a sweep plot can show along y.
const MEASURES: [(&str, &str); 3] = [
    ("overall_time", "overall time [s]"),
    ("total_energy", "total energy [J]"),
    ("failure_chance", "failure chance"),
];

/// A run with its inputs by name: its variables, and its labels as `label:NAME`.
struct Row {
    run: RunRecord,
    inputs: BTreeMap<String, Value>,
}

impl Row {
    fn new(run: RunRecord) -> Row {
        let mut inputs: BTreeMap<String, Value> = run
            .variables
            .as_object()
            .map(|o| o.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
            .unwrap_or_default();
        if let Some(labels) = run.labels.as_object() {
            inputs.extend(labels.iter().map(|(k, v)| (format!("label:{k}"), v.clone())));
        }
        Row { run, inputs }
    }

    /// Input `name`, null where the run has none.
    fn input(&self, name: &str) -> &Value {
        self.inputs.get(name).unwrap_or(&Value::Null)
    }

    /// Measure `name` of a finished run.
    fn measure(&self, name: &str) -> &Value {
        self.run.result.as_ref().map_or(&Value::Null, |r| &r[name])
    }

    /// A column of the table: an input or a measure; `status` and `run` too.
    fn cell(&self, column: &str) -> Value {
        match column {
            "run" => Value::from(self.run.id.clone()),
            "status" => Value::from(self.run.status.to_string()),
            m if MEASURES.iter().any(|(k, _)| *k == m) => self.measure(m).clone(),
            input => self.input(input).clone(),
        }
    }
}

/// What the query asks for.
#[derive(Default)]
struct Choice {
    x: Option<String>,
    by: Option<String>,
    y: Option<String>,
    scale: Option<String>,
    fix: BTreeMap<String, String>,
    sort: Option<String>,
    desc: bool,
}

impl Choice {
    fn from_pairs(pairs: &[(String, String)]) -> Choice {
        let mut choice = Choice::default();
        for (key, value) in pairs {
            match key.as_str() {
                "x" => choice.x = Some(value.clone()),
                "by" => choice.by = Some(value.clone()),
                "y" => choice.y = Some(value.clone()),
                "scale" => choice.scale = Some(value.clone()),
                "sort" => choice.sort = Some(value.clone()),
                "desc" => choice.desc = value == "1",
                _ => {
                    if let Some(name) = key.strip_prefix("fix.") {
                        choice.fix.insert(name.to_owned(), value.clone());
                    }
                }
            }
        }
        choice
    }
}

/// Each varied input with its distinct values in order: what the sweep varies; inputs
/// with numbers first (the default x is the first), then by name.
fn varied(rows: &[Row]) -> Vec<(String, Vec<Value>)> {
    let mut values: BTreeMap<&str, HashMap<String, &Value>> = BTreeMap::new();
    for row in rows {
        for (k, v) in &row.inputs {
            values.entry(k).or_default().entry(v.to_string()).or_insert(v);
        }
    }
    let mut axes: Vec<(String, Vec<Value>)> = values
        .into_iter()
        .filter(|(_, v)| v.len() > 1)
        .map(|(k, v)| {
            let mut v: Vec<Value> = v.into_values().cloned().collect();
            v.sort_by(compare_cells);
            (k.to_owned(), v)
        })
        .collect();
    axes.sort_by_key(|(_, values)| !values.iter().all(Value::is_number));
    axes
}

/// What every run of the sweep shares: its app (by title), its system (by name) and the
/// inputs that are not `varied`, with their one value.
fn what_ran(rows: &[Row], varied: &[String]) -> Markup {
    let Some(first) = rows.first() else {
        return html! {};
    };
    let fixed: Vec<String> = first
        .inputs
        .iter()
        .filter(|(name, _)| !varied.contains(name))
        .map(|(name, value)| format!("{} = {}", column_name(name), num(value)))
        .collect();
    html! {
        dl.facts #what-ran {
            dt { "app" } dd { (first.run.app_title.as_deref().unwrap_or("an app without a leading comment")) }
            dt { "system" } dd { code { (first.run.system_name.as_deref().unwrap_or("(unnamed)")) } }
            dt { "fixed inputs" } dd { @if fixed.is_empty() { "none" } @else { (fixed.join(", ")) } }
        }
    }
}

/// How another varied input is shown: at one value, or every value in a plot of its own.
#[derive(Clone, Debug, PartialEq)]
enum Fixed {
    At(String),
    All,
}

/// The plot's settled choices.
struct Plot {
    x: String,
    by: Option<String>,
    y: &'static str,
    scale: &'static str,
    /// Every other varied input, as shown.
    others: Vec<(String, Vec<Value>, Fixed)>,
}

impl Plot {
    fn settle(choice: &Choice, axes: &[(String, Vec<Value>)]) -> Option<Plot> {
        let names: Vec<&String> = axes.iter().map(|(n, _)| n).collect();
        let x = choice
            .x
            .clone()
            .filter(|x| names.contains(&x))
            .or_else(|| names.first().map(|n| (*n).clone()))?;
        // `by=` (the "nothing" choice) draws one line; no `by` at all picks the next axis.
        let by = match &choice.by {
            Some(b) if b.is_empty() => None,
            Some(b) if names.contains(&b) && *b != x => Some(b.clone()),
            _ => names.iter().find(|a| ***a != x).map(|a| (*a).clone()),
        };
        let y = MEASURES
            .iter()
            .map(|(m, _)| *m)
            .find(|m| choice.y.as_deref() == Some(m))
            .unwrap_or(MEASURES[0].0);
        let scale = ["linear", "log"]
            .into_iter()
            .find(|s| choice.scale.as_deref() == Some(s))
            .unwrap_or("auto");
        let others = axes
            .iter()
            .filter(|(name, _)| *name != x && Some(name) != by.as_ref())
            .map(|(name, values)| {
                let first = values.first().map(plain).unwrap_or_default();
                let fixed = match choice.fix.get(name).map(String::as_str) {
                    Some("all") => Fixed::All,
                    Some(v) if values.iter().any(|value| plain(value) == v) => Fixed::At(v.to_owned()),
                    _ => Fixed::At(first),
                };
                (name.clone(), values.clone(), fixed)
            })
            .collect();
        Some(Plot {
            x,
            by,
            y,
            scale,
            others,
        })
    }

    /// The rows each small multiple draws, with its title's suffix: one panel where every
    /// other input is fixed, one per combination of the inputs shown "all", in the order
    /// the rows come.
    fn panels<'a>(&self, rows: &'a [Row]) -> Vec<(String, Vec<&'a Row>)> {
        let mut panels: Vec<(String, Vec<&'a Row>)> = Vec::new();
        let mut index: HashMap<String, usize> = HashMap::new();
        for row in rows {
            let kept = self.others.iter().all(|(name, _, fixed)| match fixed {
                Fixed::At(v) => plain(row.input(name)) == *v,
                Fixed::All => true,
            });
            if !kept {
                continue;
            }
            let key: Vec<String> = self
                .others
                .iter()
                .map(|(name, _, _)| format!("{name} = {}", num(row.input(name))))
                .collect();
            let key = key.join(", ");
            match index.get(&key) {
                Some(&i) => panels[i].1.push(row),
                None => {
                    index.insert(key.clone(), panels.len());
                    panels.push((key, vec![row]));
                }
            }
        }
        panels
    }

    fn chart(&self, title_suffix: &str, rows: &[&Row]) -> String {
        let y_name = MEASURES
            .iter()
            .find(|(m, _)| *m == self.y)
            .map_or(self.y, |m| m.1);
        let points = rows.iter().filter_map(|row| {
            let group = Input(self.by.as_ref().map_or(Value::Null, |b| row.input(b).clone()));
            Some((group, row.input(&self.x).as_f64()?, row.measure(self.y).as_f64()?))
        });
        let mut title = format!("{y_name} against {}", self.x);
        if !title_suffix.is_empty() {
            title += &format!(" ({title_suffix})");
        }
        let mut chart = Chart::sweep(
            &title,
            (&self.x, y_name, self.by.as_deref().unwrap_or_default()),
            points,
        );
        if self.by.is_none() {
            chart.series.iter_mut().for_each(|s| s.label = y_name.to_owned());
        }
        if self.scale != "auto" {
            (chart.log_x, chart.log_y) = (self.scale == "log", self.scale == "log");
        }
        chart.svg()
    }
}

/// One input's value as a line of a sweep plot: ordered as the table orders inputs, and
/// written as the table writes them.
#[derive(PartialEq, Eq)]
struct Input(Value);

impl Ord for Input {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        compare_cells(&self.0, &other.0)
    }
}

impl PartialOrd for Input {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl std::fmt::Display for Input {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&num(&self.0))
    }
}

/// `/sweeps/{id}/results.csv`, where the CSV was before the API served it: a permanent
/// redirect to `/api/sweeps/{id}/results.csv`, so that saved links keep working.
pub async fn csv_moved(Path(id): Path<String>) -> Redirect {
    Redirect::permanent(&format!("/api/sweeps/{}/results.csv", encode(&id)))
}

/// The query string of `pairs` with each key of `set` set to its value (a key whose new
/// value is empty is left out); the user's other choices, empty ones too (`by=`), stay.
fn with(pairs: &[(String, String)], set: &[(&str, &str)]) -> String {
    let kept = pairs
        .iter()
        .filter(|(k, _)| !set.iter().any(|(s, _)| s == k))
        .map(|(k, v)| (k.as_str(), v.as_str()));
    let all: Vec<String> = kept
        .chain(set.iter().copied().filter(|(_, v)| !v.is_empty()))
        .map(|(k, v)| format!("{}={}", encode(k), encode(v)))
        .collect();
    format!("?{}", all.join("&"))
}

pub async fn page(
    State(s): State<AppState>,
    Path(id): Path<String>,
    Query(pairs): Query<Vec<(String, String)>>,
) -> PageResult<Markup> {
    let summary = s
        .store
        .sweep(&id)
        .await?
        .ok_or_else(|| ApiError::not_found("sweep", &id))?;
    let choice = Choice::from_pairs(&pairs);
    let mut rows: Vec<Row> = s.store.sweep_runs(&id).await?.into_iter().map(Row::new).collect();
    let axes = varied(&rows);
    let names: Vec<String> = axes.iter().map(|(n, _)| n.clone()).collect();
    let columns: Vec<String> = ["run", "status"]
        .into_iter()
        .map(str::to_owned)
        .chain(names.iter().cloned())
        .chain(MEASURES.iter().map(|(m, _)| (*m).to_owned()))
        .collect();
    let sort = choice.sort.clone().filter(|c| columns.contains(c));
    rows.sort_by(|a, b| {
        let by_sort = sort.iter().map(|c| compare_cells(&a.cell(c), &b.cell(c)));
        let by_inputs = names.iter().map(|k| compare_cells(a.input(k), b.input(k)));
        let order = by_sort
            .chain(by_inputs)
            .find(|o| o.is_ne())
            .unwrap_or(std::cmp::Ordering::Equal);
        if choice.desc && sort.is_some() {
            order.reverse()
        } else {
            order
        }
    });
    let plot = Plot::settle(&choice, &axes);
    let panels = plot.as_ref().map(|p| p.panels(&rows)).unwrap_or_default();
    let charts: Vec<String> = plot.as_ref().map_or_else(Vec::new, |p| {
        panels
            .iter()
            .take(MAX_PLOTS)
            .map(|(suffix, panel)| p.chart(suffix, panel))
            .collect()
    });
    let finished = summary.done + summary.failed + summary.cancelled;
    let unfinished = summary.queued + summary.running;
    let content = html! {
        p.crumbs { a href="/" { "Overview" } }
        h1 { "Sweep " (short(&summary.id)) }
        (lifecycle::buttons(Target::Sweep, &summary.id, unfinished > 0))
        (what_ran(&rows, &names))
        p.progress {
            progress max=(summary.total) value=(finished) {}
            " " (finished) " of " (summary.total) " runs finished: "
            (summary.done) " done, " (summary.failed) " failed, " (summary.cancelled) " cancelled, "
            (summary.queued) " queued, " (summary.running) " running"
        }
        p.downloads { "Download: " a href={ "/api/sweeps/" (encode(&summary.id)) "/results.csv" } { "CSV" } }
        @if let Some(plot) = &plot {
            h2 { "Plot" }
            (plot_form(plot, &names))
            div.charts.multiples[charts.len() > 1] {
                @for svg in &charts { div.chart.sweep-plot { (PreEscaped(svg)) } }
            }
            @if panels.len() > charts.len() {
                p.muted { "The first " (charts.len()) " of " (panels.len()) " plots: fix more inputs to see the others." }
            }
        }
        h2 { "Runs" }
        p.muted {
            "Click a column's name to sort by it (again: the other way)."
            @if rows.len() > MAX_TABLE_ROWS { " The first " (MAX_TABLE_ROWS) " of " (rows.len()) " runs in this order; the CSV has all." }
        }
        div #runs {
            table {
                thead { tr { @for c in &columns {
                    @let desc = sort.as_deref() == Some(c.as_str()) && !choice.desc;
                    th { a href=(with(&pairs, &[("sort", c), ("desc", if desc { "1" } else { "" })])) { (column_name(c)) } }
                } } }
                tbody { @for row in rows.iter().take(MAX_TABLE_ROWS) { tr {
                    td { a href={ "/runs/" (encode(&row.run.id)) } { (short(&row.run.id)) } }
                    td { span class={ "status " (row.run.status) } { (row.run.status) } }
                    @for a in &names { td.num { (num(row.input(a))) } }
                    @for (m, _) in MEASURES { td.num { (num(row.measure(m))) } }
                } } }
            }
        }
    };
    Ok(layout::page_with(
        &format!("Sweep {}", short(&summary.id)),
        content,
        (unfinished > 0).then_some(REFRESH_SECONDS),
    ))
}

fn column_name(column: &str) -> &str {
    MEASURES
        .iter()
        .find(|(m, _)| *m == column)
        .map_or(column, |(_, name)| name)
}

fn plot_form(plot: &Plot, names: &[String]) -> Markup {
    html! {
        form.filters method="get" {
            label { "x " select name="x" data-autosubmit { @for a in names { option selected[*a == plot.x] { (a) } } } }
            label { "one line per " select name="by" data-autosubmit {
                option value="" selected[plot.by.is_none()] { "nothing" }
                @for a in names { option selected[Some(a) == plot.by.as_ref()] { (a) } }
            } }
            label { "y " select name="y" data-autosubmit { @for (m, name) in MEASURES { option value=(m) selected[m == plot.y] { (name) } } } }
            label { "axes " select name="scale" data-autosubmit {
                @for (value, name) in [("auto", "auto (log where values span 2 decades)"), ("linear", "linear"), ("log", "log")] {
                    option value=(value) selected[value == plot.scale] { (name) }
                }
            } }
            @for (name, values, fixed) in &plot.others {
                label.fix { (name) " "
                    select name={ "fix." (name) } data-autosubmit {
                        @for v in values { @let exact = plain(v); option value=(exact) selected[*fixed == Fixed::At(exact.clone())] { (num(v)) } }
                        option value="all" selected[*fixed == Fixed::All] { "all (a plot each)" }
                    }
                }
            }
            noscript { button type="submit" { "Plot" } }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rows() -> Vec<Row> {
        let mut rows = Vec::new();
        for (i, (b, a, n)) in [
            (32, 1, 1e6),
            (32, 1, 1e8),
            (64, 1, 1e6),
            (64, 1, 1e8),
            (32, 8, 1e6),
            (32, 8, 1e8),
            (64, 8, 1e6),
            (64, 8, 1e8),
        ]
        .into_iter()
        .enumerate()
        {
            let run = RunRecord {
                id: format!("r{i}"),
                status: hetsim_service::status::RunStatus::Done,
                queue: "default".into(),
                sweep: Some("s".into()),
                labels: json!({"GPU": 1}),
                variables: json!({"blockSize": b, "a": a, "numElements": n}),
                attempts: 1,
                error: None,
                worker: None,
                created_at: "t".into(),
                started_at: None,
                finished_at: None,
                submitter: None,
                app_title: None,
                system_name: None,
                result: Some(
                    json!({"overall_time": n * 1e-9 * f64::from(a), "total_energy": 1.0, "failure_chance": 0.0}),
                ),
            };
            rows.push(Row::new(run));
        }
        rows
    }

    fn choice(pairs: &[(&str, &str)]) -> Choice {
        Choice::from_pairs(
            &pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect::<Vec<_>>(),
        )
    }

    #[test]
    fn a_third_input_is_fixed_at_its_first_value_by_default() {
        let rows = rows();
        let axes = varied(&rows);
        let plot = Plot::settle(&choice(&[("x", "numElements"), ("by", "a")]), &axes).unwrap();
        assert_eq!(
            plot.others,
            [(
                "blockSize".to_owned(),
                vec![json!(32), json!(64)],
                Fixed::At("32".into())
            )]
        );
        let panels = plot.panels(&rows);
        assert_eq!(panels.len(), 1);
        assert_eq!(panels[0].1.len(), 4, "two lines of two points, block 32 only");
        let svg = plot.chart(&panels[0].0, &panels[0].1);
        assert_eq!(svg.matches("<polyline").count(), 2, "{svg}");
        assert!(
            svg.contains("blockSize = 32"),
            "the title says what is fixed: {svg}"
        );
    }

    #[test]
    fn all_draws_a_plot_per_value_and_a_scale_can_be_forced() {
        let rows = rows();
        let axes = varied(&rows);
        let plot = Plot::settle(
            &choice(&[
                ("x", "numElements"),
                ("by", "a"),
                ("fix.blockSize", "all"),
                ("scale", "linear"),
            ]),
            &axes,
        )
        .unwrap();
        let panels = plot.panels(&rows);
        let titles: Vec<&str> = panels.iter().map(|(t, _)| t.as_str()).collect();
        assert_eq!(titles, ["blockSize = 32", "blockSize = 64"]);
        let fixed = Plot::settle(
            &choice(&[("x", "numElements"), ("by", "a"), ("fix.blockSize", "64")]),
            &axes,
        )
        .unwrap();
        assert_eq!(fixed.panels(&rows)[0].0, "blockSize = 64");
        assert_eq!(plot.scale, "linear");
        assert!(
            !plot.chart("", &panels[0].1).contains(">1e6</text>"),
            "linear ticks"
        );
    }

    #[test]
    fn a_query_string_changes_one_key_and_keeps_the_rest() {
        let pairs = vec![
            ("x".to_owned(), "a b".to_owned()),
            ("sort".to_owned(), "run".to_owned()),
        ];
        assert_eq!(
            with(&pairs, &[("sort", "status"), ("desc", "1")]),
            "?x=a%20b&sort=status&desc=1"
        );
        assert_eq!(
            with(&pairs, &[("sort", "run"), ("desc", "")]),
            "?x=a%20b&sort=run"
        );
    }
}
