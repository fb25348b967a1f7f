//! The parser on real listings (kernel/tests/sass: cuobjdump of sm_52 … sm_90, a two-arch
//! fatbin of 14 functions; examples/kernels), its round trip, and its errors.

use hetsim_kernel::arch::{pipe, Pipe};
use hetsim_kernel::cfg::Cfg;
use hetsim_kernel::sass::{parse, parse_instruction};
use hetsim_kernel::{analyze, Options};
use proptest::prelude::*;
use std::path::PathBuf;

fn corpus() -> Vec<(PathBuf, String)> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in [root.join("tests/sass"), root.join("../examples/kernels")] {
        for entry in std::fs::read_dir(&dir).expect("corpus folder") {
            let path = entry.expect("entry").path();
            if path.extension().is_some_and(|e| e == "sass") {
                let text = std::fs::read_to_string(&path).expect("listing");
                files.push((path, text));
            }
        }
    }
    assert!(files.len() >= 15, "the corpus has {} listings", files.len());
    files
}

/// Instruction lines of the corpus: `/*0040*/  IMAD R5, … ;  /* 0x… */` without the comments.
fn corpus_instruction_texts() -> &'static [String] {
    static LINES: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    LINES.get_or_init(|| {
        let mut lines = Vec::new();
        for (_, text) in corpus() {
            let listing = parse(&text).expect("parses");
            for k in &listing.kernels {
                lines.extend(k.instructions.iter().map(|i| i.to_string()));
            }
        }
        lines
    })
}

#[test]
fn every_listing_parses_and_every_kernel_analyses() {
    let mut kernels = 0;
    for (path, text) in corpus() {
        let listing = parse(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        for k in &listing.kernels {
            kernels += 1;
            Cfg::build(k).unwrap_or_else(|e| panic!("{} {}: {e}", path.display(), k.name));
            let options = Options {
                kernel: Some(k.name.clone()),
                arch: k.arch,
                ..Options::default()
            };
            let report =
                analyze(&listing, &options).unwrap_or_else(|e| panic!("{} {}: {e}", path.display(), k.name));
            assert!(report.instructions > 0);
        }
    }
    assert!(kernels >= 60, "{kernels} kernels analysed");
}

#[test]
fn the_fatbin_lists_its_fourteen_functions_when_none_is_chosen() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/sass/all_kernels_fatbin.sass"
    ))
    .expect("listing");
    let listing = parse(&text).expect("parses");
    assert_eq!(listing.kernels.len(), 14);
    let err = analyze(&listing, &Options::default()).expect_err("ambiguous");
    assert!(err.message.contains("14 kernels match"), "{err}");
    assert!(
        err.message
            .contains("void sgemm_tiled<16>(int, float const*, float const*, float*) [sm_90]"),
        "{err}"
    );
    let options = Options {
        kernel: Some("sgemm_tiled<16>".into()),
        arch: "sm_90".parse().ok(),
        ..Options::default()
    };
    let report = analyze(&listing, &options).expect("one kernel");
    assert_eq!(report.name, "_Z11sgemm_tiledILi16EEviPKfS1_Pf");
}

#[test]
fn maxwell_cuobjdump_marks_dual_issued_pairs() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/sass/all_kernels_sm52.sass"
    ))
    .expect("listing");
    let listing = parse(&text).expect("parses");
    let pairs: usize = listing
        .kernels
        .iter()
        .flat_map(|k| &k.instructions)
        .filter(|i| i.dual_issue_with_next)
        .count();
    assert!(pairs > 0, "sm_52 cuobjdump prints `{{ A ; B }}` pairs");
    assert!(listing
        .kernels
        .iter()
        .all(|k| k.arch.map(|a| a.to_string()) == Some("sm_52".into())));
}

#[test]
fn every_corpus_opcode_has_a_pipe() {
    // Only these are `misc` by design; anything else landing there is an unclassified opcode.
    let misc = ["S2R", "CS2R", "S2UR", "NOP", "SHFL", "VOTE"];
    for (path, text) in corpus() {
        for k in parse(&text).expect("parses").kernels {
            let arch = k.arch.unwrap_or(hetsim_kernel::Arch::MAXWELL);
            for i in &k.instructions {
                if pipe(i, arch) == Pipe::Misc {
                    assert!(
                        misc.contains(&i.opcode.as_str()),
                        "{}: `{}` has no pipe",
                        path.display(),
                        i.opcode
                    );
                }
            }
        }
    }
}

#[test]
fn errors_name_the_line() {
    let err = parse("        /*0000*/   LDC R1, c[0x0][0x28] ;\n        /*0010*/   @Q0 EXIT ;\n")
        .expect_err("bad guard");
    assert_eq!(err.line, Some(2), "{err}");
    assert!(err.to_string().contains("expected a predicate register"), "{err}");
    let err = parse("1.   MOV R1, RZ;\n3.   EXIT;\n").expect_err("skipped number");
    assert_eq!(err.line, Some(2));
    assert!(err.message.contains("expected instruction number 2"), "{err}");
    let err = parse("        /*0000*/   BRA 0x1000 ;\n")
        .map(|l| Cfg::build(&l.kernels[0]))
        .expect("parses")
        .expect_err("target");
    assert!(err.to_string().contains("line 1: branch target 0x1000"), "{err}");
    let err = parse("just some text\n").expect_err("no code");
    assert!(err.message.contains("no SASS instruction found"), "{err}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Any instruction of a real listing prints as text that parses back to itself.
    #[test]
    fn any_real_instruction_round_trips(index in 0usize..100_000) {
        let lines = corpus_instruction_texts();
        let text = &lines[index % lines.len()];
        let once = parse_instruction(text, 1).expect("parses");
        prop_assert_eq!(&once.to_string(), text);
        let twice = parse_instruction(&once.to_string(), 1).expect("parses again");
        prop_assert_eq!(once, twice);
    }

    /// Arbitrary text never panics the parser: it parses or names a line.
    #[test]
    fn arbitrary_text_never_panics(text in "(/\\*[0-9a-f]{4}\\*/ )?[@!A-Z0-9_.,\\[\\]{}|~+ -]{0,40};?\n?") {
        if let Err(e) = parse(&text) {
            prop_assert!(e.line.is_some());
        }
    }
}

#[test]
fn sm90_listings_carry_the_compilers_stalls_and_barriers() {
    let text = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/kernels/saxpy2-sm90.sass"),
    )
    .expect("reads");
    let listing = parse(&text).expect("parses");
    let at = |address: u64| {
        let ins = listing.kernels[0]
            .instructions
            .iter()
            .find(|i| i.address == address)
            .expect("present");
        ins.control.expect("an sm_90 instruction has control bits")
    };
    // The measured H100 listing. LDG.E R3 (upper word 0x000162000c1e1900): stall 1, releases
    // barrier 0 once its address is read and barrier 5 once loaded.
    let load = at(0xf0);
    assert_eq!(
        (load.stall, load.write_barrier, load.read_barrier, load.wait_mask),
        (1, Some(5), Some(0), 0)
    );
    // FADD R0, R3, R0 (0x020fca…) waits on barrier 5, then stalls 5 cycles.
    let add = at(0x130);
    assert_eq!((add.stall, add.write_barrier, add.wait_mask), (5, None, 1 << 5));
    // ISETP (0x000fda…) before the loop's branch: 13 cycles for the predicate.
    assert_eq!(at(0x140).stall, 13);
    // S2R (0x000e22…) releases barrier 0; IMAD (0x001fe2…) waits on it.
    assert_eq!(at(0x10).write_barrier, Some(0));
    assert_eq!(at(0x40).wait_mask, 1);
}

#[test]
fn maxwell_listings_have_no_per_instruction_control_bits() {
    let text = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/sass/all_kernels_sm52.sass"),
    )
    .expect("reads");
    let listing = parse(&text).expect("parses");
    assert!(listing
        .kernels
        .iter()
        .flat_map(|k| &k.instructions)
        .all(|i| i.control.is_none()));
}
