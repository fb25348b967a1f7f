//! A submission of a stored trace, checked: no app and no labels, compute policies a server
//! can apply, variables the system reads, and, on every variant of the system, a process of
//! the label `GPU` for each rank. A sweep may list several policies: each run takes one as
//! its variable `compute` (so that the sweep's page and CSV show it as an input), which the
//! worker replays under.

use std::collections::BTreeMap;

use hetsim_scripting::check_labels;
use hetsim_system::Variable;
use serde_json::Value;

use super::{
    at_most_the_sweep_limit, new_id, system, system_variants, variable_axes, RunSpec, SpecError, SpecResult,
    Submission,
};
use crate::limits::ServiceLimits;
pub use crate::replayed::COMPUTE_VARIABLE;
use crate::storage::{NewInput, ReplayInput, Store};

impl RunSpec {
    pub(super) async fn check_replay(
        store: &Store,
        limits: &ServiceLimits,
        sub: Submission,
        sweep: bool,
    ) -> SpecResult<RunSpec> {
        let key = sub.trace_name.clone().unwrap_or_default();
        if sub.app.is_some() || sub.app_id.is_some() || sub.app_name.is_some() {
            return Err(SpecError::invalid(
                "trace_name",
                "give an app or a trace, not both",
            ));
        }
        if !sub.labels.is_empty() {
            return Err(SpecError::invalid(
                "labels",
                format!(
                    "a trace's rank r runs on the r-th process of the label {}: labels are not taken",
                    replay_label()
                ),
            ));
        }
        if sub.variables.contains_key(COMPUTE_VARIABLE) {
            return Err(SpecError::invalid(
                "variables.compute",
                "a trace's compute policy is given as `compute`, not as a variable",
            ));
        }
        let policies = policies(sub.compute.as_ref(), sweep)?;
        let trace = store
            .trace(&key)
            .await?
            .ok_or_else(|| SpecError::invalid("trace_name", format!("no stored trace named {key:?}")))?;
        let mut variable_axes = variable_axes(&sub.variables, sweep)?;
        let sizes = variable_axes.iter().map(|a| a.1.len()).chain([policies.len()]);
        at_most_the_sweep_limit(sizes, limits)?;
        let (system_json, system) = system(store, &sub).await?;
        if let Some(name) = sub.variables.keys().find(|n| !system.variables.contains(n)) {
            return Err(SpecError::invalid(
                &format!("variables.{name}"),
                "the system reads no such variable (a trace has no app to read one)",
            ));
        }
        if system.variables.iter().any(|v| v == COMPUTE_VARIABLE) {
            return Err(SpecError::invalid(
                "system",
                "the system declares a variable `compute`, which a trace's runs hold their compute policy in: rename it",
            ));
        }
        let variants = system_variants(&system_json, &system, &variable_axes)?;
        let labels = BTreeMap::from([(replay_label(), trace.ranks)]);
        for variant in variants.iter().chain(variants.is_empty().then_some(&system)) {
            check_labels(variant, &labels, limits.max_processes).map_err(|e| {
                SpecError::invalid(
                    "trace_name",
                    format!("trace {:?} has {} ranks: {e}", trace.name, trace.ranks),
                )
            })?;
        }
        let compute = policies.join(", ");
        // The policy varies slowest: a sweep's runs of one policy come together.
        variable_axes.insert(
            0,
            (
                COMPUTE_VARIABLE.to_owned(),
                policies.into_iter().map(Variable::Text).collect(),
            ),
        );
        Ok(RunSpec {
            queue: sub.queue,
            input: NewInput {
                id: new_id(),
                // The title the overview shows (`app_title`), and what the run's source says.
                app: format!("// Replay of trace {} (compute {compute})\n", trace.name),
                system: system_json,
                trace: sub.trace,
                replay: Some(ReplayInput {
                    trace_id: trace.id,
                    compute,
                }),
            },
            labels: vec![labels],
            variables: variable_axes,
        })
    }
}

/// The label whose r-th process runs rank r of a submitted trace: hetsim-replay's default,
/// which the worker replays with.
fn replay_label() -> String {
    hetsim_replay::ReplayOptions::default().label
}

/// The compute policies of a submission: `replay` when none is given, one text, or (in a
/// sweep) a non-empty list of texts, each one a worker can apply.
fn policies(compute: Option<&Value>, sweep: bool) -> SpecResult<Vec<String>> {
    let texts: Vec<&Value> = match compute {
        None => return Ok(vec!["replay".to_owned()]),
        Some(Value::Array(items)) if sweep && !items.is_empty() => items.iter().collect(),
        Some(Value::Array(items)) if sweep => {
            return Err(SpecError::invalid("compute", "an empty list"));
        }
        Some(Value::Array(_)) => {
            return Err(SpecError::invalid("compute", "a list is allowed only in a sweep"));
        }
        Some(one) => vec![one],
    };
    texts
        .into_iter()
        .map(|v| {
            let text = v
                .as_str()
                .ok_or_else(|| SpecError::invalid("compute", format!("expected a policy's name, not {v}")))?;
            server_policy(text)?;
            Ok(text.to_owned())
        })
        .collect()
}

/// Refuses a compute policy a worker cannot apply: `model:FILE.rhai` names a file of the
/// client's, which no worker has.
fn server_policy(text: &str) -> SpecResult<()> {
    if text.starts_with("model:") {
        return Err(SpecError::invalid(
            "compute",
            "model:FILE.rhai reads a file of the client's, which a server does not have: use replay, roofline or scale:GPU",
        ));
    }
    hetsim_replay::Policy::parse(text)
        .map(drop)
        .map_err(|e| SpecError::invalid("compute", e))
}
