//! `hetsim replay`: a Chakra execution trace replayed on a system, locally.

use std::io::Write;

use anyhow::{anyhow, bail, Result};
use hetsim_chakra::{rank_files, Groups};
use hetsim_replay::{replay, Policy, ReplayOptions};
use hetsim_scripting::Detail;
use hetsim_simulator::collectives::Algorithm;
use hetsim_simulator::Options;
use hetsim_system::load_with;

use crate::cli::ReplayArgs;
use hetsim_lab::files::write_file;

pub fn run(args: ReplayArgs) -> Result<()> {
    let variables = super::run::variables(&args.vars)?;
    let system = load_with(&args.system, &variables).map_err(|e| anyhow!(e))?;
    let files = rank_files(&args.trace)?;
    let policy = Policy::parse(&args.compute).map_err(|e| anyhow!(e))?;
    let Some(algorithm) = Algorithm::parse(&args.algorithm) else {
        bail!(
            "--algorithm {:?}: expected nccl, binomial, flat or ring",
            args.algorithm
        );
    };
    let groups = match &args.groups {
        Some(path) => Groups::read(path)?,
        None => Groups::default(),
    };
    let detail = Detail::from(args.detail);
    let options = ReplayOptions {
        label: args.label.clone(),
        policy,
        policy_text: args.compute.clone(),
        groups,
        algorithm,
        follow_ctrl: !args.data_deps_only,
        engine: Options {
            trace: detail.needs_trace() || args.trace_out.is_some() || args.timeline.is_some(),
            ..Options::default()
        },
        ..ReplayOptions::default()
    };
    let report = replay(&files, &system, &options).map_err(|e| anyhow!("replay failed: {e}"))?;
    if let Some(path) = &args.trace_out {
        write_file(path, serde_json::to_string(&report.run.results.trace)?)?;
    }
    if let Some(path) = &args.timeline {
        write_file(path, hetsim_charts::timeline_svg(&report.run.results))?;
    }
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    if args.json {
        let mut head = Vec::new();
        report.run.write_json(detail, &mut head)?;
        let mut value: serde_json::Value = serde_json::from_slice(&head)?;
        if let Some(object) = value.as_object_mut() {
            object.insert("policy".to_owned(), serde_json::to_value(&report.policy)?);
            object.insert("ranks".to_owned(), serde_json::to_value(&report.ranks)?);
        }
        serde_json::to_writer_pretty(&mut out, &value)?;
        out.write_all(b"\n")?;
    } else {
        out.write_all(super::run::summary(&report.run).as_bytes())?;
        out.write_all(report.rank_lines().as_bytes())?;
    }
    out.flush()?;
    Ok(())
}
