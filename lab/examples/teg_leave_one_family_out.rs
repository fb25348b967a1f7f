//! TEG's fit (`hetsim calibrate gpu … --teg-file`) with each kit family held out in turn: the
//! fit on saxpy2 and the H100 kit less one family, scored on that family (docs/MODELS.md,
//! "TEG"). Minutes a fold, so no test runs it.
//!
//! `cargo run --release -p hetsim-lab --example teg_leave_one_family_out`
use hetsim_lab::benchset::BenchSet;
use hetsim_lab::measurements::Measurements;
use hetsim_lab::teg_fit::*;
use std::path::Path;

fn main() -> anyhow::Result<()> {
    let dir = Path::new("examples/validation/data/h100");
    let m = Measurements::read(dir)?;
    let sets = [BenchSet::read(&dir.join("kit/benchset.toml"))?];
    let text = std::fs::read_to_string("teg/data/hopper.toml")?;
    let inputs = FitInputs::new(&m, &sets, "H100 SXM5 80GB", &text, "hopper.toml")?;
    let all = inputs.launches(&m)?;
    let families: std::collections::BTreeSet<String> = all
        .iter()
        .filter(|l| l.family.starts_with("kit"))
        .map(|l| l.family.clone())
        .collect();
    drop(all);
    // The values the shipped fit started from, so that no fold starts from a point fitted on its family.
    let start = TegPoint {
        efficiency: 0.68,
        queue_cycles: 30.0,
        replacement: 600.0,
        taken_branch: 5.0,
    };
    for family in families {
        let (mut held, mut train): (Vec<_>, Vec<_>) =
            inputs.launches(&m)?.into_iter().partition(|l| l.family == family);
        let f = fit(&mut train, &inputs.gpu, start, &|_, _| {});
        let e = errors(&mut held, &inputs.gpu, f.point);
        println!(
            "{family} held out: fit {:?} (train {:.2} %), held-out MAPE {:.2} % over {}",
            f.point,
            100.0 * f.mape,
            100.0 * mape(&e),
            e.len()
        );
    }
    Ok(())
}
