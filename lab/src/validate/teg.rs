//! TEG (`hetsim-teg`, the `gpu-teg` model) on a measurement folder's own launches, straight
//! from their SASS: saxpy2's sweep and occupancy files, and the held-out kernels of
//! `heldout_times.csv`.

use anyhow::{anyhow, Result};

use super::{check, Basis, Check, Point};
use crate::measurements::Measurements;
use crate::teg_fit::saxpy2_launches;

/// The saxpy2 launches of sweep.csv and occupancy_block256.csv predicted by TEG
/// (`hetsim-teg`, the `gpu-teg` model) from the folder's saxpy2 SASS and the catalog's `gpu`,
/// with teg/data's parameters: no per-kernel constant, nothing fitted here. One check per
/// file, labelled `basis`.
pub(super) fn saxpy2_checks(m: &Measurements, gpu: &str, basis: Basis) -> Result<Vec<Check>> {
    let Some(sass) = &m.sass else {
        return Ok(Vec::new());
    };
    let listing = hetsim_kernel::parse(sass).map_err(|e| anyhow!("saxpy2 SASS: {e}"))?;
    let kernel = listing
        .kernels
        .first()
        .ok_or_else(|| anyhow!("saxpy2 SASS: no kernel"))?;
    let gpu = hetsim_teg::Gpu::from_catalog(gpu).map_err(|e| anyhow!("{gpu}: {e}"))?;
    let mut checks = Vec::new();
    for (file, name) in [
        ("sweep", "sweep.csv (kernel, TEG)"),
        ("occupancy", "occupancy_block256.csv (kernel, TEG)"),
    ] {
        let teg: Vec<Point> = saxpy2_launches(kernel, m, &gpu, file)?
            .iter()
            .map(|l| {
                let seconds =
                    hetsim_teg::run(&l.prepared, &l.plan, &gpu, hetsim_teg::WhatIf::default()).seconds;
                Point {
                    what: l.what.clone(),
                    measured: l.seconds,
                    predicted: seconds,
                    interval: [seconds; 2],
                }
            })
            .collect();
        if !teg.is_empty() {
            checks.push(check(name, basis, &teg, 0.08, 0.25));
        }
    }
    Ok(checks)
}

/// The held-out kernels of `heldout_times.csv` predicted by TEG from the SASS they ran
/// (`heldout_sm<XY>.sass`), as `saxpy2_checks` does saxpy2: no kernel's constant, nothing fitted
/// to them.
pub(super) fn heldout_points(m: &Measurements, gpu: &str) -> Result<Vec<Point>> {
    let (Some(sass), false) = (&m.heldout_sass, m.heldout.is_empty()) else {
        return Ok(Vec::new());
    };
    let listing = hetsim_kernel::parse(sass).map_err(|e| anyhow!("heldout SASS: {e}"))?;
    let gpu = hetsim_teg::Gpu::from_catalog(gpu).map_err(|e| anyhow!("{gpu}: {e}"))?;
    m.heldout
        .iter()
        .map(|r| {
            let at = format!("heldout_times.csv line {}", r.line);
            let kernel = hetsim_kernel::select_kernel(&listing, Some(&r.kernel), None)
                .map_err(|e| anyhow!("{at}: {e}"))?;
            let arch = crate::teg_fit::listing_arch(kernel, &gpu).map_err(|e| anyhow!("{at}: {e}"))?;
            let prepared = hetsim_teg::Prepared::new(kernel, arch).map_err(|e| anyhow!("{at}: {e}"))?;
            let commas = |s: &str| s.replace(['x', ';'], ",");
            let launch = crate::launch::launch_of(
                &commas(&r.grid),
                &commas(&r.block),
                Some(&commas(&r.args)),
                r.dynamic_shared as u32,
            )
            .map_err(|e| anyhow!("{at}: {e}"))?;
            let simulation = hetsim_teg::simulate(&prepared, &launch, &gpu, &hetsim_teg::Options::default())
                .map_err(|e| anyhow!("{at}: TEG: {e}"))?;
            Ok(Point {
                what: format!("{at}: {} {}", r.kernel, r.launch),
                measured: r.seconds,
                predicted: simulation.seconds,
                interval: [simulation.seconds; 2],
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    const H100: &str = "H100 SXM5 80GB";

    /// A measurement folder with the kit's held-out files: the corpus's SASS of every kernel and
    /// two launches timed at `seconds`.
    fn heldout_folder(seconds: [f64; 2]) -> std::path::PathBuf {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let dir = std::env::temp_dir().join(format!("hetsim-heldout-{}-{}", std::process::id(), seconds[0]));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let copy = |from: &str, to: &str| {
            std::fs::copy(root.join(from), dir.join(to)).expect("copies");
        };
        copy("examples/validation/data/h100/props.csv", "props.csv");
        copy("kernel/tests/sass/all_kernels_sm90.sass", "heldout_sm90.sass");
        let header =
            "kernel,launch,args,grid,block,dynamic_smem,source,reps,mean_seconds,median_seconds,min_seconds";
        let rows = [
            format!(
                "sgemm_tiled<16>,N=256,256;_;_;_,16x16x1,16x16x1,0,sgemm_tiled.cu,20,0,{},0",
                seconds[0]
            ),
            format!(
                "stencil5,N=512_M=512,512;512;_;_,32x32x1,16x16x1,0,stencil5.cu,20,0,{},0",
                seconds[1]
            ),
        ];
        std::fs::write(
            dir.join("heldout_times.csv"),
            format!("{header}\n{}\n", rows.join("\n")),
        )
        .expect("writes");
        dir
    }

    #[test]
    fn heldout_launches_are_predicted_from_their_own_sass() {
        let dir = heldout_folder([1e-5, 1e-5]);
        let m = Measurements::read(&dir).expect("reads");
        let points = heldout_points(&m, H100).expect("predicts");
        assert_eq!(points.len(), 2);
        assert!(
            points[0].what.contains("line 2: sgemm_tiled<16> N=256"),
            "{}",
            points[0].what
        );
        assert!(
            points.iter().all(|p| p.predicted > 3.9e-6 && p.predicted < 1e-3),
            "{points:?}"
        );
        // Timed at exactly what TEG predicts, the check's error is 0.
        let exact = heldout_folder([points[0].predicted, points[1].predicted]);
        let again = heldout_points(&Measurements::read(&exact).expect("reads"), H100).expect("predicts");
        let c = check("held out", Basis::HeldOut, &again, 0.15, f64::INFINITY);
        assert!(c.pass && c.mape < 1e-6, "{c:?}");
        std::fs::remove_dir_all(&dir).ok();
        std::fs::remove_dir_all(&exact).ok();
    }

    #[test]
    fn a_heldout_row_naming_no_kernel_of_the_sass_is_an_error_naming_its_line() {
        let dir = heldout_folder([2e-5, 2e-5]);
        let text = std::fs::read_to_string(dir.join("heldout_times.csv")).expect("reads");
        std::fs::write(
            dir.join("heldout_times.csv"),
            text.replace("stencil5,N=512", "stencil9,N=512"),
        )
        .expect("writes");
        let e = heldout_points(&Measurements::read(&dir).expect("reads"), H100).expect_err("no stencil9");
        assert!(e.to_string().contains("heldout_times.csv line 3"), "{e}");
        std::fs::remove_dir_all(&dir).ok();
    }
}
