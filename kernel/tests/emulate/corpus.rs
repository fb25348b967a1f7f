//! The kernel corpus (`kernel/tests/sass/`) against the goldens of its README ("Golden
//! values").

use super::*;

/// Formula S of the README, for saxpy2 and daxpy_loop as nvcc 13 unrolls them.
fn formula_s(a: i64) -> f64 {
    let ind = |c: bool| f64::from(u8::from(c));
    match a {
        ..=0 => 21.0,
        1..=3 => 32.0 + 4.0 * a as f64,
        _ => {
            43.0 + ind(a >= 16) * (1.0 + 19.0 * (a / 16) as f64)
                + 10.0 * ind(a % 16 >= 8)
                + 7.0 * ((a % 8) / 4) as f64
                + 4.0 * (a % 4) as f64
        }
    }
}

#[test]
fn corpus_saxpy2_and_daxpy_follow_formula_s() {
    let saxpy2 = corpus("saxpy2_sm90.sass");
    let daxpy = corpus("daxpy_loop_sm90.sass");
    for (a, expected) in [
        (1, 36.0),
        (4, 50.0),
        (7, 62.0),
        (8, 53.0),
        (16, 63.0),
        (32, 82.0),
        (128, 196.0),
        (1024, 1260.0),
    ] {
        assert_eq!(formula_s(a), expected);
        assert_eq!(
            executed(&emulate(&saxpy2, &saxpy(4096, 256, 1 << 20, a))),
            expected,
            "a = {a}"
        );
    }
    for a in [-3, 0, 2, 5, 9, 13, 23, 200] {
        assert_eq!(
            executed(&emulate(&saxpy2, &saxpy(4096, 256, 1 << 20, a))),
            formula_s(a),
            "a = {a}"
        );
    }
    assert_eq!(bytes(&emulate(&saxpy2, &saxpy(4096, 256, 1 << 20, 8))), 384.0);
    assert_eq!(bytes(&emulate(&saxpy2, &saxpy(4096, 256, 1 << 20, 0))), 256.0);
    let r = emulate(&daxpy, &saxpy(4096, 256, 1 << 20, 8));
    assert_eq!((executed(&r), bytes(&r)), (53.0, 768.0));
}

#[test]
fn corpus_unroll1_and_sfu_loop() {
    let unroll1 = corpus("saxpy2_unroll1_sm90.sass");
    for a in [0, 1, 8, 100] {
        let r = emulate(&unroll1, &saxpy(4096, 256, 1 << 20, a));
        let expected = if a >= 1 { 27.0 + 4.0 * a as f64 } else { 21.0 };
        assert_eq!(executed(&r), expected, "a = {a}");
        // The x load sits in the loop's preheader: skipped when a ≤ 0.
        assert_eq!(bytes(&r), if a >= 1 { 384.0 } else { 256.0 });
        if a >= 1 {
            assert_modes_agree(&r, &static_mode(&unroll1, &[("L0", a as f64)]));
        }
    }
    let sfu = corpus("sfu_loop_sm90.sass");
    for a in [0, 2, 4, 8, 11] {
        let r = emulate(&sfu, &saxpy(4096, 256, 1 << 20, a));
        let expected = match a {
            ..=0 => 21.0,
            1..=3 => 27.0 + 10.0 * a as f64,
            _ => 28.0 + 22.0 * (a / 4) as f64 + 10.0 * (a % 4) as f64,
        };
        assert_eq!(executed(&r), expected, "a = {a}");
        assert_eq!(bytes(&r), 256.0);
    }
    let r = emulate(&sfu, &saxpy(4096, 256, 1 << 20, 8));
    assert_eq!(value(&r.per_warp.by_pipe["sfu"]), 16.0, "8 MUFU.EX2 + 8 MUFU.SIN");
}

/// Stride 1, 2, 4, 32: the load spans 128·stride bytes (at most 32 sectors), the store 128.
#[test]
fn corpus_strided_copy_counts_sectors() {
    let listing = corpus("strided_sm90.sass");
    for (stride, expected) in [(1, 256.0), (2, 384.0), (4, 640.0), (8, 1152.0), (32, 1152.0)] {
        let r = emulate(&listing, &saxpy(4096, 256, 1 << 20, stride));
        assert_eq!(executed(&r), 18.0);
        assert_eq!(bytes(&r), expected, "stride {stride}");
        assert!(r.notes.is_empty(), "{:?}", r.notes);
    }
    // Static mode sees the coalesced case only.
    let r = emulate(&listing, &saxpy(4096, 256, 1 << 20, 1));
    assert_modes_agree(&r, &static_mode(&listing, &[]));
    assert_eq!(bytes(&r), value(&static_mode(&listing, &[]).gmem_bytes_per_warp));
}

fn square(n: i64) -> Options {
    launch([16, 16, 1], [16, 16, 1], &[Some(n), None, None, None])
}

#[test]
fn corpus_sgemm_counts_two_rows_a_warp() {
    let r = emulate(&corpus("sgemm_naive_sm90.sass"), &square(256));
    assert_eq!((executed(&r), bytes(&r)), (1215.0, 32_896.0));
    let tiled = corpus("sgemm_tiled_sm90.sass");
    let r = emulate(&tiled, &square(256));
    assert_eq!((executed(&r), bytes(&r)), (841.0, 4224.0));
    assert_modes_agree(&r, &static_mode(&tiled, &[("L0", 16.0)]));
}

/// 572 warps hold a boundary thread (42 instructions), 7620 do not (40); bytes 7,319,552 in
/// all, 64 y-edge warps moving 576 bytes and the rest 896.
#[test]
fn corpus_stencil_averages_boundary_warps() {
    let r = emulate(
        &corpus("stencil5_sm90.sass"),
        &launch([32, 32, 1], [16, 16, 1], &[Some(512), Some(512), None, None]),
    );
    assert_eq!(executed(&r), 328_824.0 / 8192.0);
    assert_eq!(bytes(&r), 7_319_552.0 / 8192.0);
    let s = summary(&r);
    assert_eq!(s.warps, 8192);
    assert!(s.coverage.starts_with("grouped"), "{}", s.coverage);
}

/// The bytes a warp moves are the source's, whatever the architecture: every sm_70–sm_90
/// listing of the corpus gives the sm_90 goldens, with every address known.
#[test]
fn corpus_bytes_agree_across_architectures() {
    let kernels: [(&str, Options, f64); 7] = [
        ("saxpy2", saxpy(4096, 256, 1 << 20, 8), 384.0),
        ("strided_copy", saxpy(4096, 256, 1 << 20, 2), 384.0),
        ("daxpy_loop", saxpy(4096, 256, 1 << 20, 8), 768.0),
        ("sfu_loop", saxpy(4096, 256, 1 << 20, 8), 256.0),
        ("sgemm_naive", square(256), 32_896.0),
        ("sgemm_tiled", square(256), 4224.0),
        (
            "stencil5",
            launch([32, 32, 1], [16, 16, 1], &[Some(512), Some(512), None, None]),
            893.5,
        ),
    ];
    for arch in [70, 75, 80, 86, 89, 90] {
        let listing = corpus(&format!("all_kernels_sm{arch}.sass"));
        for (name, options, expected) in &kernels {
            let options = Options {
                kernel: Some(name.to_string()),
                ..options.clone()
            };
            let r = emulate(&listing, &options);
            assert_eq!(bytes(&r), *expected, "{name} on sm_{arch}");
            // Volta, Turing, Ampere and Ada have no latency table of their own: Hopper's
            // stands in, and the analysis says so; nothing else is noted.
            let stand_in = r.notes.iter().filter(|n| n.ends_with(", standing in")).count();
            assert!(
                stand_in == usize::from(arch < 90) && r.notes.len() == stand_in && r.unresolved.is_empty(),
                "{name} on sm_{arch}: {:?}",
                r.notes
            );
        }
    }
}
