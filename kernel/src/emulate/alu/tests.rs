//! Each operation against the instruction it models, by cases and by properties.

use super::*;
use proptest::prelude::*;

fn run(op: Op, values: &[u32], preds: &[bool]) -> Out {
    let mut v = [0; MAX_VALUES];
    v[..values.len()].copy_from_slice(values);
    let mut p = [false; MAX_PREDS];
    p[..preds.len()].copy_from_slice(preds);
    eval(op, &v, &p)
}

fn xmad_op(a_high: bool, b_high: bool, psl: bool, mrg: bool, cbcc: bool) -> Op {
    Op::Xmad(Xmad {
        a_high,
        b_high,
        psl,
        mrg,
        cbcc,
        c_half: None,
    })
}

/// Maxwell's 32-bit `x·y + z`: `XMAD.MRG t, x, y.H1, RZ; XMAD s, x, y, z;
/// XMAD.PSL.CBCC r, x.H1, t.H1, s` (seed 004, Figure 5.2, instructions 4–6).
fn maxwell_multiply_add(x: u32, y: u32, z: u32) -> u32 {
    let t = run(xmad_op(false, true, false, true, false), &[x, y, 0], &[]).words[0];
    let s = run(xmad_op(false, false, false, false, false), &[x, y, z], &[]).words[0];
    run(xmad_op(true, true, true, false, true), &[x, t, s], &[]).words[0]
}

proptest! {
    #[test]
    fn xmad_idiom_multiplies_32_bits(x: u32, y: u32, z: u32) {
        prop_assert_eq!(maxwell_multiply_add(x, y, z), x.wrapping_mul(y).wrapping_add(z));
    }

    #[test]
    fn iadd3_carry_chain_adds_64_bits(a: u64, b: u64) {
        let add = Op::Add { negate: [false; 3], extended: false };
        let low = run(add, &[a as u32, b as u32, 0], &[]);
        let high = run(
            Op::Add { negate: [false; 3], extended: true },
            &[(a >> 32) as u32, (b >> 32) as u32, 0],
            &[low.flags[0], false],
        );
        let total = u64::from(low.words[0]) | u64::from(high.words[0]) << 32;
        prop_assert_eq!(total, a.wrapping_add(b));
    }

    #[test]
    fn negated_carry_chain_subtracts_64_bits(a: u64, b: u64) {
        // IADD3 R0, P0, R2, -R4, RZ; IADD3.X R1, R3, ~R5, RZ, P0, !PT
        let low = run(Op::Add { negate: [false, true, false], extended: false }, &[a as u32, b as u32, 0], &[]);
        let high = run(
            Op::Add { negate: [false; 3], extended: true },
            &[(a >> 32) as u32, !((b >> 32) as u32), 0],
            &[low.flags[0], false],
        );
        let total = u64::from(low.words[0]) | u64::from(high.words[0]) << 32;
        prop_assert_eq!(total, a.wrapping_sub(b));
    }

    #[test]
    fn lea_pair_scales_a_64_bit_index(i: i32, base: u64, s in 0u32..5) {
        // LEA R2, P0, R5, UR4, s; LEA.HI.X R3, R5, UR5, R4, s, P0 with R4 = sign(R5).
        let lo = run(Op::Lea { high: false, sign_extend: false, carry_in: false }, &[i as u32, base as u32, s], &[]);
        let hi = run(
            Op::Lea { high: true, sign_extend: false, carry_in: true },
            &[i as u32, (base >> 32) as u32, (i >> 31) as u32, s],
            &[lo.flags[0]],
        );
        let address = u64::from(lo.words[0]) | u64::from(hi.words[0]) << 32;
        prop_assert_eq!(address, base.wrapping_add(((i as i64) << s) as u64));
    }

    #[test]
    fn imad_wide_matches_64_bit_arithmetic(a: i32, b: i32, c: u64) {
        let out = run(Op::Imad { mode: ImadMode::Wide { signed: true }, carry_in: false }, &[a as u32, b as u32, c as u32, (c >> 32) as u32], &[]);
        let r = u64::from(out.words[0]) | u64::from(out.words[1]) << 32;
        prop_assert_eq!(r, c.wrapping_add((i64::from(a) * i64::from(b)) as u64));
    }

    #[test]
    fn lop3_evaluates_its_table(a: u32, b: u32, c: u32) {
        let lop = |lut: u32| run(Op::Lop3, &[a, b, c, lut], &[]).words[0];
        prop_assert_eq!(lop(0xc0), a & b);
        prop_assert_eq!(lop(0xfc), a | b);
        prop_assert_eq!(lop(0x3c), a ^ b);
        prop_assert_eq!(lop(0x96), a ^ b ^ c);
        prop_assert_eq!(lop(0xf8), a | (b & c));
        prop_assert_eq!(lop(0x0f), !a);
    }

    #[test]
    fn extended_isetp_compares_64_bits(a: i64, b: i64) {
        for (cmp, expect) in [(Cmp::Lt, a < b), (Cmp::Ge, a >= b), (Cmp::Eq, a == b), (Cmp::Ne, a != b), (Cmp::Le, a <= b), (Cmp::Gt, a > b)] {
            let low = run(Op::Isetp { cmp, signed: false, bop: Bop::And, extended: false }, &[a as u32, b as u32], &[true]);
            let high = run(
                Op::Isetp { cmp, signed: true, bop: Bop::And, extended: true },
                &[(a >> 32) as u32, (b >> 32) as u32],
                &[true, low.flags[0]],
            );
            prop_assert_eq!(high.flags[0], expect, "{:?}", cmp);
        }
    }

    #[test]
    fn funnel_shifts_match_64_bit_shifts(x: u64, s in 0u32..32) {
        let shf = |left, high, signed, wide| Op::Shf { left, high, signed, wide, wrap: false };
        let (lo, hi) = (x as u32, (x >> 32) as u32);
        prop_assert_eq!(run(shf(true, true, false, true), &[lo, s, hi], &[]).words[0], ((x << s) >> 32) as u32);
        prop_assert_eq!(run(shf(false, false, false, true), &[lo, s, hi], &[]).words[0], (x >> s) as u32);
        prop_assert_eq!(run(shf(true, false, false, false), &[lo, s, 0], &[]).words[0], lo << s);
        prop_assert_eq!(run(shf(false, true, true, false), &[0, s, hi], &[]).words[0], ((hi as i32) >> s) as u32);
    }
}

#[test]
fn imad_high_adds_the_pair() {
    let hi = |a: u32, b: u32, c: u64| {
        run(
            Op::Imad {
                mode: ImadMode::High { signed: false },
                carry_in: false,
            },
            &[a, b, c as u32, (c >> 32) as u32],
            &[],
        )
        .words[0]
    };
    assert_eq!(hi(0x8000_0000, 4, 0), 2);
    assert_eq!(hi(0x8000_0000, 4, 7 << 32), 9);
    assert_eq!(hi(0xffff_ffff, 0xffff_ffff, 0xffff_ffff), 0xffff_fffe + 1);
    let signed = run(
        Op::Imad {
            mode: ImadMode::High { signed: true },
            carry_in: false,
        },
        &[(-2i32) as u32, 3, 0, 0],
        &[],
    );
    assert_eq!(signed.words[0], u32::MAX);
}

#[test]
fn isetp_combines_with_its_predicate() {
    let isetp = |bop| Op::Isetp {
        cmp: Cmp::Ge,
        signed: true,
        bop,
        extended: false,
    };
    assert_eq!(run(isetp(Bop::And), &[5, 3], &[true]).flags, [true, false]);
    assert_eq!(run(isetp(Bop::And), &[5, 3], &[false]).flags, [false, false]);
    assert_eq!(run(isetp(Bop::Or), &[1, 3], &[true]).flags, [true, true]);
    assert_eq!(run(isetp(Bop::Xor), &[1, 3], &[true]).flags, [true, false]);
    // Signed versus unsigned.
    assert!(!run(isetp(Bop::And), &[u32::MAX, 0], &[true]).flags[0]);
    let unsigned = Op::Isetp {
        cmp: Cmp::Ge,
        signed: false,
        bop: Bop::And,
        extended: false,
    };
    assert!(run(unsigned, &[u32::MAX, 0], &[true]).flags[0]);
}

#[test]
fn plop3_and_psetp() {
    // PLOP3.LUT P0, PT, PT, PT, PT, 0x80, 0x0 sets P0; 0x8 clears it.
    assert_eq!(
        run(Op::Plop3, &[0x80, 0], &[true, true, true]).flags,
        [true, false]
    );
    assert_eq!(
        run(Op::Plop3, &[0x8, 0], &[true, true, true]).flags,
        [false, false]
    );
    let psetp = Op::Psetp {
        first: Bop::And,
        second: Bop::And,
    };
    assert_eq!(run(psetp, &[], &[false, true, true]).flags, [false, true]);
}

#[test]
fn small_operations() {
    assert_eq!(run(Op::Sel, &[1, 2], &[true]).words[0], 1);
    assert_eq!(
        run(Op::Imnmx { signed: true }, &[u32::MAX, 2], &[true]).words[0],
        u32::MAX
    );
    assert_eq!(
        run(Op::Imnmx { signed: true }, &[u32::MAX, 2], &[false]).words[0],
        2
    );
    assert_eq!(
        run(Op::Imnmx { signed: false }, &[u32::MAX, 2], &[true]).words[0],
        2
    );
    assert_eq!(run(Op::Iabs, &[(-7i32) as u32], &[]).words[0], 7);
    assert_eq!(run(Op::Popc, &[0xf0f0], &[]).words[0], 8);
    assert_eq!(
        run(
            Op::Flo {
                signed: false,
                shift: false
            },
            &[0x10],
            &[]
        )
        .words[0],
        4
    );
    assert_eq!(
        run(
            Op::Flo {
                signed: false,
                shift: true
            },
            &[0x10],
            &[]
        )
        .words[0],
        27
    );
    assert_eq!(
        run(
            Op::Flo {
                signed: false,
                shift: false
            },
            &[0],
            &[]
        )
        .words[0],
        u32::MAX
    );
    assert_eq!(run(Op::Brev, &[1], &[]).words[0], 1 << 31);
    assert_eq!(
        run(Op::Prmt, &[0x4433_2211, 0x3210, 0x8877_6655], &[]).words[0],
        0x4433_2211
    );
    assert_eq!(
        run(Op::Prmt, &[0x4433_2211, 0x7654, 0x8877_6655], &[]).words[0],
        0x8877_6655
    );
    assert_eq!(run(Op::Prmt, &[0x0000_0080, 0x8888, 0], &[]).words[0], u32::MAX);
    assert_eq!(
        run(Op::Bfe { signed: false }, &[0xabcd, 0x0404], &[]).words[0],
        0xc
    );
    assert_eq!(
        run(Op::Bfe { signed: true }, &[0xabcd, 0x0404], &[]).words[0],
        (-4i32) as u32
    );
    assert_eq!(run(Op::Bfi, &[0x3, 0x0208, 0xffff], &[]).words[0], 0xfcff | 0x300);
    assert_eq!(run(Op::Sgxt { signed: true }, &[0xff, 8], &[]).words[0], u32::MAX);
    assert_eq!(run(Op::Sgxt { signed: false }, &[0x1ff, 8], &[]).words[0], 0xff);
    assert_eq!(run(Op::Bmsk { wrap: false }, &[4, 3], &[]).words[0], 0x70);
    assert_eq!(run(Op::Shl { wrap: false }, &[1, 40], &[]).words[0], 0);
    assert_eq!(
        run(
            Op::Shr {
                signed: true,
                wrap: false
            },
            &[0x8000_0000, 0x1e],
            &[]
        )
        .words[0],
        (-2i32) as u32
    );
    assert_eq!(
        run(
            Op::Shr {
                signed: false,
                wrap: false
            },
            &[0x8000_0000, 0x1e],
            &[]
        )
        .words[0],
        2
    );
    assert_eq!(run(Op::Iscadd, &[3, 10, 2], &[]).words[0], 22);
    assert_eq!(run(Op::Lop(Logic::PassB), &[3, 10], &[]).words[0], 10);
    let p2r = run(Op::P2r { shift: 0 }, &[0xf0, 0x7], &[true, false, true]);
    assert_eq!(p2r.words[0], 0xf5);
    assert_eq!(
        run(
            Op::Imul {
                high: true,
                signed: false
            },
            &[1 << 31, 4],
            &[]
        )
        .words[0],
        2
    );
    // IMAD.X R3, RZ, RZ, R5, P0 adds the carry.
    assert_eq!(
        run(
            Op::Imad {
                mode: ImadMode::Low,
                carry_in: true
            },
            &[0, 0, 5],
            &[true]
        )
        .words[0],
        6
    );
}
