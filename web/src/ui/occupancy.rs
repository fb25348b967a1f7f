//! `/occupancy`: the occupancy of a kernel on a stored GPU, by the rules of NVIDIA's CUDA
//! Occupancy Calculator (`hetsim_models::occupancy`), with the calculator's three graphs:
//! resident warps per SM against block size, registers per thread and shared memory per
//! block, the kernel's own point marked on each.

use axum::extract::{Query, State};
use hetsim_models::occupancy::{evaluate, limits_of, Input, Limits, COMPUTE_CAPABILITIES};
use hetsim_models::Scalar;
use maud::{html, Markup, PreEscaped};
use serde::Deserialize;

use super::{layout, PageResult};
use crate::state::AppState;
use hetsim_charts::{Chart, Series};
use hetsim_service::storage::ComponentRecord;

/// The form's fields as typed: a field left empty or not a whole number keeps its default.
#[derive(Deserialize)]
pub struct Kernel {
    gpu: Option<String>,
    threads: Option<String>,
    registers: Option<String>,
    shared: Option<String>,
}

fn whole(field: &Option<String>, default: u32) -> u32 {
    field
        .as_deref()
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or(default)
}

/// A GPU's compute capability attribute, as text ("9.0") or as a number (9).
fn compute_capability(gpu: &ComponentRecord) -> Option<&'static Limits> {
    match gpu.spec.attributes.get("computeCapability")? {
        Scalar::Text(cc) => limits_of(cc),
        Scalar::Number(x) => limits_of(&format!("{x:.1}")),
    }
}

pub async fn page(State(s): State<AppState>, Query(k): Query<Kernel>) -> PageResult<Markup> {
    let gpus: Vec<(ComponentRecord, &'static Limits)> = s
        .store
        .components(None, None)
        .await?
        .into_iter()
        .filter(|c| c.spec.kind.eq_ignore_ascii_case("GPU"))
        .filter_map(|c| compute_capability(&c).map(|l| (c, l)))
        .collect();
    let chosen = gpus
        .iter()
        .find(|(c, _)| Some(&c.spec.name) == k.gpu.as_ref())
        .or(gpus.first());
    let limits = chosen.map_or(&COMPUTE_CAPABILITIES[COMPUTE_CAPABILITIES.len() - 1], |(_, l)| *l);
    let input = Input {
        limits,
        threads_per_block: whole(&k.threads, 256).clamp(1, limits.max_threads_per_block),
        registers_per_thread: whole(&k.registers, 32).clamp(1, limits.max_registers_per_thread),
        shared_memory_per_block: whole(&k.shared, 0).min(limits.max_shared_memory_per_block),
    };
    let out = evaluate(&input);
    Ok(layout::page(
        "Occupancy",
        html! {
            h1 { "Occupancy" }
            p.muted { "NVIDIA's CUDA Occupancy Calculator rules (seed 004, section 4.4.1): resident blocks per SM are the least of the warp, block, register and shared-memory limits." }
            form.card.filters method="get" action="/occupancy" {
                label { "GPU "
                    select name="gpu" data-autosubmit {
                        @for (c, l) in &gpus {
                            option value=(c.spec.name) selected[Some(&c.spec.name) == chosen.map(|g| &g.0.spec.name)] { (c.spec.name) " (" (l.compute_capability) ")" }
                        }
                    }
                }
                label { "Threads per block " input type="number" name="threads" min="1" max=(limits.max_threads_per_block) value=(input.threads_per_block); }
                label { "Registers per thread " input type="number" name="registers" min="1" max=(limits.max_registers_per_thread) value=(input.registers_per_thread); }
                label { "Shared memory per block [B] " input type="number" name="shared" min="0" max=(limits.max_shared_memory_per_block) value=(input.shared_memory_per_block); }
                button type="submit" { "Calculate" }
            }
            div.summary {
                div.figure { span.value { (layout::number(out.occupancy * 100.0)) " %" } span.name { "occupancy" } }
                div.figure { span.value { (out.active_warps_per_sm) " / " (limits.max_warps_per_sm) } span.name { "warps per SM" } }
                div.figure { span.value { (out.active_blocks_per_sm) } span.name { "blocks per SM" } }
                div.figure { span.value { (out.limiter.as_str()) } span.name { "limited by" } }
            }
            (layout::table(
                ["limit", "blocks per SM"],
                [
                    ("warps", out.blocks_limit_warps),
                    ("blocks", out.blocks_limit_blocks),
                    ("registers", out.blocks_limit_registers),
                    ("shared memory", out.blocks_limit_shared_memory),
                ].map(|(name, blocks)| html! { tr { td { (name) } td.num { (blocks) } } }),
            ))
            div.charts {
                @for chart in graphs(&input) { div.chart { (PreEscaped(chart.svg())) } }
            }
        },
    ))
}

/// The calculator's three graphs: warps per SM as one input varies, the others held.
fn graphs(input: &Input) -> [Chart; 3] {
    let l = input.limits;
    let warps = |i: Input| f64::from(evaluate(&i).active_warps_per_sm);
    let threads = (1..=l.max_threads_per_block / 32).map(|w| w * 32);
    let registers = 1..=l.max_registers_per_thread;
    let step = (l.max_shared_memory_per_block / 96).max(l.shared_memory_allocation_unit);
    let shared = (0..=l.max_shared_memory_per_block).step_by(step as usize);
    [
        graph(
            "Warps per SM against block size",
            "threads per block",
            threads
                .map(|t| {
                    (
                        f64::from(t),
                        warps(Input {
                            threads_per_block: t,
                            ..input.clone()
                        }),
                    )
                })
                .collect(),
            f64::from(input.threads_per_block),
            warps(input.clone()),
        ),
        graph(
            "Warps per SM against registers per thread",
            "registers per thread",
            registers
                .map(|r| {
                    (
                        f64::from(r),
                        warps(Input {
                            registers_per_thread: r,
                            ..input.clone()
                        }),
                    )
                })
                .collect(),
            f64::from(input.registers_per_thread),
            warps(input.clone()),
        ),
        graph(
            "Warps per SM against shared memory per block",
            "shared memory per block [B]",
            shared
                .map(|m| {
                    (
                        f64::from(m),
                        warps(Input {
                            shared_memory_per_block: m,
                            ..input.clone()
                        }),
                    )
                })
                .collect(),
            f64::from(input.shared_memory_per_block),
            warps(input.clone()),
        ),
    ]
}

fn graph(title: &str, x_label: &str, line: Vec<(f64, f64)>, x: f64, y: f64) -> Chart {
    Chart {
        title: title.to_owned(),
        x_label: x_label.to_owned(),
        y_label: "resident warps per SM".to_owned(),
        log_x: false,
        log_y: false,
        markers: false,
        series: vec![
            Series {
                label: "warps per SM".to_owned(),
                points: line,
                line: true,
                colour: 0,
            },
            Series {
                label: "this kernel".to_owned(),
                points: vec![(x, y)],
                line: false,
                colour: 1,
            },
        ],
    }
}
