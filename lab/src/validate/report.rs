//! The validation report: its tables, its figures and its Markdown, whose prose is the
//! template `report.md` beside this file, with a `{{name}}` for each part computed here.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use crate::files::write_file;
use anyhow::{Context, Result};
use hetsim_charts::{Chart, Series};

use super::coverage;
use super::{percent, Check, KernelKey, Point, Validation};

/// The report's text around the computed parts.
const TEMPLATE: &str = include_str!("report.md");

/// `template` with each `{{key}}` replaced by its value.
fn fill(template: &str, parts: &[(&str, String)]) -> String {
    parts.iter().fold(template.to_owned(), |text, (key, value)| {
        text.replace(&format!("{{{{{key}}}}}"), value)
    })
}

/// The checks as a Markdown table.
pub fn table(checks: &[Check]) -> String {
    if checks.is_empty() {
        return super::NO_ROWS.to_owned();
    }
    let mut s = String::from(
        "| what | basis | points | MAPE | worst | target | |\n|---|---|---:|---:|---:|---|---|\n",
    );
    for c in checks {
        let target = if !c.target_mape.is_finite() {
            "(reported)".to_owned()
        } else if c.target_worst.is_finite() {
            format!(
                "MAPE ≤ {}, worst ≤ {}",
                percent(c.target_mape),
                percent(c.target_worst)
            )
        } else {
            format!("MAPE ≤ {}", percent(c.target_mape))
        };
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} |",
            c.name,
            c.basis.as_str(),
            c.points,
            percent(c.mape),
            percent(c.worst),
            target,
            if !c.target_mape.is_finite() {
                "—"
            } else if c.pass {
                "met"
            } else {
                "**missed**"
            }
        );
    }
    s
}

/// Groups kernel points by `group` into measured dots and predicted lines along `x`.
fn kernel_chart(
    title: String,
    x_label: &str,
    points: &[(KernelKey, Point)],
    group: impl Fn(&KernelKey) -> f64,
    x: impl Fn(&KernelKey) -> f64,
    log_x: bool,
    group_name: &str,
) -> Chart {
    let mut groups: BTreeMap<u64, Vec<(f64, &Point)>> = BTreeMap::new();
    for (k, p) in points {
        groups.entry(group(k) as u64).or_default().push((x(k), p));
    }
    let mut series = Vec::new();
    for (i, (g, mut pts)) in groups.into_iter().enumerate() {
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        series.push(Series {
            label: format!("{group_name} {g}"),
            points: pts.iter().map(|(x, p)| (*x, p.measured * 1e3)).collect(),
            line: false,
            colour: i,
        });
        series.push(Series {
            label: "  predicted".into(),
            points: pts.iter().map(|(x, p)| (*x, p.predicted * 1e3)).collect(),
            line: true,
            colour: i,
        });
    }
    Chart {
        title,
        x_label: x_label.into(),
        y_label: "kernel time [ms]".into(),
        log_x,
        log_y: true,
        markers: false,
        series,
    }
}

fn transfer_chart(v: &Validation) -> Chart {
    let mut groups: BTreeMap<(String, String), Vec<(f64, &Point)>> = BTreeMap::new();
    for (k, p) in &v.transfers {
        groups
            .entry((k.direction.clone(), k.memory.clone()))
            .or_default()
            .push((k.bytes as f64, p));
    }
    let mut series = Vec::new();
    for (i, ((direction, memory), pts)) in groups.into_iter().enumerate() {
        series.push(Series {
            label: format!("{direction} {memory}"),
            points: pts.iter().map(|(x, p)| (*x, p.measured)).collect(),
            line: false,
            colour: i,
        });
        series.push(Series {
            label: "  predicted".into(),
            points: pts.iter().map(|(x, p)| (*x, p.predicted)).collect(),
            line: true,
            colour: i,
        });
    }
    let errs: Vec<String> = v
        .checks
        .iter()
        .filter(|c| c.name.starts_with("transfers"))
        .map(|c| {
            let name = c
                .name
                .trim_start_matches("transfers.csv ")
                .trim_end_matches(" ≥ 1 MiB");
            format!(
                "{} {}",
                name.replace("HostToDevice", "HtD").replace("DeviceToHost", "DtH"),
                percent(c.mape)
            )
        })
        .collect();
    Chart {
        title: format!("cudaMemcpy, MAPE ≥ 1 MiB: {}", errs.join(", ")),
        x_label: "bytes".into(),
        y_label: "seconds".into(),
        log_x: true,
        log_y: true,
        markers: false,
        series,
    }
}

fn mape_of(v: &Validation, prefix: &str) -> String {
    v.checks.iter().find(|c| c.name.starts_with(prefix)).map_or_else(
        || "—".to_owned(),
        |c| format!("MAPE {}, worst {}", percent(c.mape), percent(c.worst)),
    )
}

/// Writes the Markdown report and its figures, in a folder beside it named as the report in
/// lower case (`VALIDATION.md`: `validation/`; `VALIDATION-H200.md`: `validation-h200/`).
pub fn write_report(v: &Validation, path: &Path) -> Result<()> {
    let folder = figure_folder(path);
    let dir = path.parent().unwrap_or(Path::new(".")).join(&folder);
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let figures = [
        (
            "sweep.svg",
            kernel_chart(
                format!(
                    "saxpy2 time vs intensity per block size ({})",
                    mape_of(v, "sweep")
                ),
                "compute intensity a",
                &v.sweep,
                |k| k.block,
                |k| k.intensity,
                true,
                "block",
            ),
        ),
        (
            "occupancy.svg",
            kernel_chart(
                format!(
                    "saxpy2 time vs occupancy, block 256 ({})",
                    mape_of(v, "occupancy")
                ),
                "resident warps per SM",
                &v.occupancy,
                |k| k.intensity,
                |k| k.warps_per_sm,
                false,
                "a =",
            ),
        ),
    ];
    let mut figures: Vec<_> = Vec::from(figures)
        .into_iter()
        .filter(|(_, chart)| !chart.series.is_empty())
        .collect();
    if !v.transfers.is_empty() {
        figures.push(("transfers.svg", transfer_chart(v)));
    }
    for (name, chart) in &figures {
        let file = dir.join(name);
        write_file(&file, chart.svg())?;
    }
    let figure_links: String = figures
        .iter()
        .map(|(name, chart)| format!("![{}]({folder}/{name})\n\n", chart.title))
        .collect();
    let power: String = v
        .power
        .iter()
        .map(|p| {
            format!(
                "| {} | {:.1} | {:.1} | {} |\n",
                p.what,
                p.measured,
                p.predicted,
                percent(p.error())
            )
        })
        .collect();
    let s = fill(
        TEMPLATE,
        &[
            ("data", v.data.clone()),
            ("system", v.system.clone()),
            ("flags", flags(v)),
            ("basis", basis_note(v.held_out).to_owned()),
            ("report", path.display().to_string()),
            ("targets", table(&v.checks)),
            ("not_run", not_run(&v.not_run)),
            ("cross_validation", table(&v.cross_validation)),
            ("families", table(&v.families)),
            ("refit", table(&v.refit)),
            ("error_bars", coverage::table(&v.error_bars)),
            ("figures", figure_links),
            ("power", power),
        ],
    );
    write_file(path, s)?;
    Ok(())
}

/// The checks that did not run, a bullet each, or a line saying every check ran.
fn not_run(lines: &[String]) -> String {
    if lines.is_empty() {
        return "Every check ran: the folder holds every file they read.\n".to_owned();
    }
    let bullets: String = lines.iter().map(|l| format!("- {l}\n")).collect();
    format!("Not run, for want of a file nothing promised or not asked for:\n\n{bullets}")
}

/// The figures' folder of the report at `path`: its name without extension, in lower case.
fn figure_folder(path: &Path) -> String {
    path.file_stem()
        .map_or_else(|| "validation".to_owned(), |s| s.to_string_lossy().to_lowercase())
}

/// The command's options beyond --data and --system, as the report's first line quotes it.
fn flags(v: &Validation) -> String {
    let gpu = v.gpu.as_ref().map(|g| format!(" --gpu {g:?}"));
    let held_out = v.held_out.then_some(" --held-out");
    format!("{}{}", gpu.unwrap_or_default(), held_out.unwrap_or_default())
}

/// What the saxpy2 rows' basis means, for the report.
fn basis_note(held_out: bool) -> &'static str {
    if held_out {
        "Nothing of either model was fitted on this GPU's measurements: its catalog entry carries another GPU's calibration over (`--held-out`). By the one rule above the saxpy2 rows are still in-sample: both models' four numbers were fitted on saxpy2's launches, on that other GPU (`gpu-queueing`: memoryQueueCycles, issueEfficiency, blockLaunchRate, warpSkew; TEG: efficiency, queue_cycles, replacement, taken_branch, on the H100 folder's saxpy2 and kit launches)."
    } else {
        "Both fit four numbers to these launches (`gpu-queueing`: memoryQueueCycles, issueEfficiency, blockLaunchRate, warpSkew; TEG: efficiency, queue_cycles, replacement, taken_branch, fitted on the H100 folder's saxpy2 and kit launches), so both are in-sample."
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_template_names_every_part_and_fill_leaves_none() {
        let parts = [
            "data",
            "system",
            "flags",
            "basis",
            "report",
            "targets",
            "not_run",
            "cross_validation",
            "families",
            "refit",
            "error_bars",
            "figures",
            "power",
        ];
        for key in parts {
            assert!(TEMPLATE.contains(&format!("{{{{{key}}}}}")), "{key}");
        }
        let filled = fill(TEMPLATE, &parts.map(|k| (k, String::new())));
        assert!(!filled.contains("{{"), "a part is left: {filled}");
    }

    #[test]
    fn each_report_has_its_own_figures() {
        assert_eq!(figure_folder(Path::new("docs/VALIDATION.md")), "validation");
        assert_eq!(
            figure_folder(Path::new("docs/VALIDATION-H200.md")),
            "validation-h200"
        );
    }
}
