//! The modelled forms of the arithmetic, logic and move instructions: which opcode and
//! modifiers give which [`alu::Op`](crate::emulate::alu::Op), how their operands become its
//! value and predicate inputs (in the order `alu::eval` reads them), and where the results go.
//! A form not listed here decodes as unmodelled (its destinations become unknown).

use super::{Decoder, Kind, Pred, Reg, Shape, Source, Value, VoteMode, CARRY};
use crate::emulate::alu::{Bop, Cmp, ImadMode, Logic, Op, Xmad, MAX_PREDS, MAX_VALUES};
use crate::regs;
use crate::sass::{Instruction, Operand, Register, RZ};

fn is_predicate(o: &Operand) -> bool {
    o.reg()
        .is_some_and(|r| matches!(r.reg, Register::Predicate(_) | Register::UniformPredicate(_)))
}

/// The destination word(s) of a register operand, `width` wide (`R2` and `R3` for a pair).
fn word_destinations(operand: Option<&Operand>, width: u8) -> Option<Vec<Option<Reg>>> {
    let r = operand?.reg()?;
    if !matches!(r.reg, Register::General(_) | Register::Uniform(_)) {
        return None;
    }
    let mut out = vec![Reg::from_register(r.reg)];
    for _ in 1..width {
        let next = out.last().copied().flatten().and_then(Reg::next);
        out.push(next);
    }
    Some(out)
}

/// Predicate destinations among `operands` (`PT` discards); `None` if one is not a predicate.
fn flag_destinations(operands: &[Operand]) -> Option<Vec<Option<Reg>>> {
    operands
        .iter()
        .map(|o| match o.reg().map(|r| r.reg) {
            Some(r @ (Register::Predicate(_) | Register::UniformPredicate(_))) => Some(Reg::from_register(r)),
            _ => None,
        })
        .collect()
}

impl Decoder<'_> {
    /// The operation and its operands, when `name`'s form is modelled.
    pub(super) fn compute(&self, name: &str, ins: &Instruction) -> Option<Shape> {
        if ins.has_modifier("128") || (ins.has_modifier("64") && name != "LDC") {
            return None;
        }
        let n = regs::destination_count(ins);
        let (dests, sources) = ins.operands.split_at(n);
        let (mut values, mut preds) = self.inputs(sources);
        let op = match name {
            "LOP3" => return lop3(ins, dests, values, preds),
            "VOTE" => return vote(ins, dests, values, preds),
            "R2UR" if values.len() == 1 && preds.is_empty() && dests.len() == 1 => {
                return Some(Shape {
                    kind: Kind::R2ur,
                    values,
                    preds,
                    words: word_destinations(dests.first(), 1)?,
                    flags: Vec::new(),
                });
            }
            "R2P" if values.len() == 2 && preds.is_empty() && dests.len() == 1 => {
                return Some(Shape {
                    kind: Kind::R2p {
                        shift: byte_shift(ins),
                    },
                    values,
                    preds,
                    words: Vec::new(),
                    flags: Vec::new(),
                });
            }
            "LDC" => {
                let Some(Operand::Constant { bank, address, .. }) = sources.first() else {
                    return None;
                };
                if sources.len() != 1 || ins.modifiers.iter().any(|x| x != "64") {
                    return None;
                }
                if ins.has_modifier("64") {
                    values.push(Value::plain(self.constant(*bank, address, 4)));
                }
                Op::Mov
            }
            "HFMA2" => {
                values = vec![Value::plain(Source::Imm(half_pair_move(ins, sources)?))];
                Op::Mov
            }
            _ => self.operation(name, ins, sources, &mut values, &mut preds)?,
        };
        if values.len() > MAX_VALUES || preds.len() > MAX_PREDS {
            return None;
        }
        let (words, mut flags) = match op {
            Op::Isetp { .. } | Op::Psetp { .. } | Op::Plop3 => (Vec::new(), flag_destinations(dests)?),
            _ => {
                let width = match op {
                    Op::Mov => values.len() as u8,
                    Op::Imad {
                        mode: ImadMode::Wide { .. },
                        ..
                    } => 2,
                    _ => 1,
                };
                (
                    word_destinations(dests.first(), width)?,
                    flag_destinations(dests.get(1..).unwrap_or(&[]))?,
                )
            }
        };
        if dests
            .first()
            .and_then(Operand::reg)
            .is_some_and(|r| r.has_suffix("CC"))
        {
            flags.push(Some(Reg::Cc));
        }
        if flags.len() > flag_outputs(op) {
            return None;
        }
        Some(Shape {
            kind: Kind::Compute(op),
            values,
            preds,
            words,
            flags,
        })
    }

    /// The operation of an arithmetic, logic or move instruction, adjusting its inputs to what
    /// [`alu::eval`](super::alu::eval) reads; `None` for a form not modelled.
    fn operation(
        &self,
        name: &str,
        ins: &Instruction,
        sources: &[Operand],
        values: &mut Vec<Value>,
        preds: &mut Vec<Pred>,
    ) -> Option<Op> {
        let m = |s: &str| ins.has_modifier(s);
        let (nv, np) = (values.len(), preds.len());
        // sm_5x–6x carry in the condition code; later architectures in a predicate operand.
        let cc_carry = self.arch.major <= 6;
        Some(match name {
            "MOV" | "MOV32I" | "S2R" | "S2UR" if nv >= 1 && np == 0 => {
                values.truncate(1);
                Op::Mov
            }
            "CS2R" if nv == 1 && np == 0 => {
                if !m("32") {
                    values.push(values[0]);
                }
                Op::Mov
            }
            "IMAD" if nv == 3 => self.imad(ins, sources, values, np)?,
            "IMUL" | "IMUL32I" if nv == 2 && np == 0 => {
                if m("U32") && m("S32") {
                    return None;
                }
                Op::Imul {
                    high: m("HI"),
                    signed: !m("U32"),
                }
            }
            "IADD3" if nv == 3 => {
                let extended = m("X");
                if (!extended && np != 0) || np > 2 {
                    return None;
                }
                Op::Add {
                    negate: take_negation(values),
                    extended,
                }
            }
            "IADD" | "IADD32I" if nv == 2 && np == 0 && cc_carry => {
                if ins.modifiers.iter().any(|x| x != "X") {
                    return None;
                }
                let extended = m("X");
                if extended {
                    preds.push(CARRY);
                }
                values.push(Value::plain(Source::Reg(None)));
                Op::Add {
                    negate: take_negation(values),
                    extended,
                }
            }
            "VIADD" if nv == 2 && np == 0 && ins.modifiers.is_empty() => {
                values.push(Value::plain(Source::Reg(None)));
                Op::Add {
                    negate: take_negation(values),
                    extended: false,
                }
            }
            "ISCADD" | "ISCADD32I" if nv == 3 && np == 0 && ins.modifiers.is_empty() => Op::Iscadd,
            "XMAD" if nv == 3 && np == 0 => Op::Xmad(xmad(ins, values)?),
            "ISETP" if nv == 2 => {
                let op = isetp(ins)?;
                let Op::Isetp { extended, .. } = op else {
                    return None;
                };
                if np != 1 + usize::from(extended) {
                    return None;
                }
                op
            }
            "PSETP" if np == 3 && nv == 0 => {
                let bops: Vec<Bop> = ins
                    .modifiers
                    .iter()
                    .map(|x| Bop::parse(x))
                    .collect::<Option<_>>()?;
                let (first, second) = match bops.as_slice() {
                    [a, b] => (*a, *b),
                    [a] => (*a, Bop::And),
                    _ => return None,
                };
                Op::Psetp { first, second }
            }
            "PLOP3" if np == 3 && nv == 2 && immediates(values) => Op::Plop3,
            "LEA" if np <= 1 => lea(ins, nv, preds, cc_carry)?,
            "SHF" if nv == 3 && np == 0 => shf(ins)?,
            "SHL" if nv == 2 && np == 0 => Op::Shl { wrap: m("W") },
            "SHR" if nv == 2 && np == 0 => Op::Shr {
                signed: !m("U32"),
                wrap: m("W"),
            },
            "LOP" | "LOP32I" if nv == 2 && np == 0 => Op::Lop(match ins.modifiers.as_slice() {
                [x] if x == "AND" => Logic::And,
                [x] if x == "OR" => Logic::Or,
                [x] if x == "XOR" => Logic::Xor,
                [x] if x == "PASS_B" => Logic::PassB,
                _ => return None,
            }),
            "SEL" if nv == 2 && np == 1 => Op::Sel,
            "IMNMX" | "VIMNMX" if nv == 2 && np == 1 => Op::Imnmx { signed: !m("U32") },
            "IABS" if nv == 1 && np == 0 => Op::Iabs,
            "POPC" | "FLO" | "BREV" if nv >= 1 && np == 0 => {
                // Maxwell's forms take an extra leading operand; the last one is the input.
                values.drain(..nv - 1);
                match name {
                    "POPC" => Op::Popc,
                    "FLO" => Op::Flo {
                        signed: !m("U32"),
                        shift: m("SH"),
                    },
                    _ => Op::Brev,
                }
            }
            "PRMT" if nv == 3 && np == 0 && ins.modifiers.is_empty() => Op::Prmt,
            "BFE" if nv == 2 && np == 0 => Op::Bfe { signed: !m("U32") },
            "BFI" if nv == 3 && np == 0 => Op::Bfi,
            "SGXT" if nv == 2 && np == 0 => Op::Sgxt { signed: !m("U32") },
            "BMSK" if nv == 2 && np == 0 => Op::Bmsk { wrap: m("W") },
            "P2R" if nv == 3 && np == 0 => {
                values.remove(0);
                *preds = (0..MAX_PREDS as u8)
                    .map(|n| Pred {
                        reg: Some(Reg::P(n)),
                        invert: false,
                    })
                    .collect();
                Op::P2r {
                    shift: byte_shift(ins),
                }
            }
            _ => return None,
        })
    }
    /// `IMAD[.MOV|.IADD|.SHL][.U32]`, `IMAD.HI`, `IMAD.WIDE` (c a pair) and `IMAD.X` (a carry-in).
    fn imad(
        &self,
        ins: &Instruction,
        sources: &[Operand],
        values: &mut Vec<Value>,
        preds: usize,
    ) -> Option<Op> {
        let signed = !ins.has_modifier("U32");
        let carry_in = ins.has_modifier("X");
        let mode = if ins.has_modifier("HI") {
            ImadMode::High { signed }
        } else if ins.has_modifier("WIDE") {
            ImadMode::Wide { signed }
        } else {
            ImadMode::Low
        };
        let carries_fit = if carry_in {
            mode == ImadMode::Low && preds == 1
        } else {
            preds == 0
        };
        if !carries_fit {
            return None;
        }
        if mode != ImadMode::Low {
            let high = self.high_word(sources.get(2)?, &values[2])?;
            values.push(high);
        }
        Some(Op::Imad { mode, carry_in })
    }
}

/// How many flag outputs `op` computes.
fn flag_outputs(op: Op) -> usize {
    match op {
        Op::Add { .. } | Op::Isetp { .. } | Op::Psetp { .. } | Op::Plop3 => 2,
        Op::Iscadd | Op::Lea { .. } => 1,
        _ => 0,
    }
}

/// `LOP3.LUT Rd, a, b, c, lut, Pin` and `LOP3.LUT Pd, Rd, a, b, c, lut, !PT` (Pd = result ≠ 0).
fn lop3(ins: &Instruction, dests: &[Operand], values: Vec<Value>, preds: Vec<Pred>) -> Option<Shape> {
    if values.len() != 4 || preds.len() != 1 || !immediates(&values[3..]) || !ins.has_modifier("LUT") {
        return None;
    }
    let (word, pred_dests) = match dests {
        [p, r] if is_predicate(p) => (r, std::slice::from_ref(p)),
        [r, rest @ ..] => (r, rest),
        [] => return None,
    };
    let flags = flag_destinations(pred_dests)?;
    // With another predicate input the flag's combination is not modelled.
    if flags.len() > 1 || (!flags.is_empty() && !preds[0].is_false()) {
        return None;
    }
    Some(Shape {
        kind: Kind::Compute(Op::Lop3),
        values,
        preds,
        words: word_destinations(Some(word), 1)?,
        flags,
    })
}

/// `VOTE.ANY Rd, Pd, Pin` (and `VOTEU`).
fn vote(ins: &Instruction, dests: &[Operand], values: Vec<Value>, preds: Vec<Pred>) -> Option<Shape> {
    let mode = match ins.modifiers.as_slice() {
        [m] if m == "ANY" => VoteMode::Any,
        [m] if m == "ALL" => VoteMode::All,
        [m] if m == "EQ" => VoteMode::Eq,
        _ => return None,
    };
    if preds.len() != 1 || !values.is_empty() || dests.len() > 2 {
        return None;
    }
    Some(Shape {
        kind: Kind::Vote(mode),
        words: word_destinations(dests.first(), 1)?,
        flags: flag_destinations(dests.get(1..).unwrap_or(&[]))?,
        values,
        preds,
    })
}

/// `XMAD[.MRG][.PSL][.CBCC|.CHI|.CLO] d, a[.H1], b[.H1], c`: the halves are taken here, since
/// `.MRG` and `.CBCC` also use b's full word.
fn xmad(ins: &Instruction, values: &mut [Value]) -> Option<Xmad> {
    let mut x = Xmad::default();
    for modifier in &ins.modifiers {
        match modifier.as_str() {
            "MRG" => x.mrg = true,
            "PSL" => x.psl = true,
            "CBCC" => x.cbcc = true,
            "CHI" => x.c_half = Some(true),
            "CLO" => x.c_half = Some(false),
            _ => return None,
        }
    }
    if values.iter().any(|v| v.negate || v.invert || v.absolute) || values[2].half.is_some() {
        return None;
    }
    x.a_high = values[0].half.take() == Some(true);
    x.b_high = values[1].half.take() == Some(true);
    Some(x)
}

/// `LEA d, a, b, s`, `LEA.HI d, a, b, hi, s` and `LEA.HI[.X].SX32 d, a, b, s`; `.X` takes a
/// carry-in predicate, or the condition code on sm_5x–6x (`cc_carry`).
fn lea(ins: &Instruction, values: usize, preds: &mut Vec<Pred>, cc_carry: bool) -> Option<Op> {
    let high = ins.has_modifier("HI");
    let sign_extend = ins.has_modifier("SX32");
    let carry_in = ins.has_modifier("X");
    let expected = if high && !sign_extend { 4 } else { 3 };
    if values != expected
        || ins
            .modifiers
            .iter()
            .any(|x| !matches!(x.as_str(), "HI" | "X" | "SX32"))
    {
        return None;
    }
    match (carry_in, preds.len()) {
        (false, 0) | (true, 1) => {}
        (true, 0) if cc_carry => preds.push(CARRY),
        _ => return None,
    }
    Some(Op::Lea {
        high,
        sign_extend,
        carry_in,
    })
}

/// `ISETP.cmp[.U32].bop[.EX]`.
fn isetp(ins: &Instruction) -> Option<Op> {
    let (mut cmp, mut bop, mut signed, mut extended) = (None, None, true, false);
    for modifier in &ins.modifiers {
        match modifier.as_str() {
            "U32" => signed = false,
            "EX" => extended = true,
            other => {
                if let Some(c) = Cmp::parse(other) {
                    cmp = Some(c);
                } else {
                    bop = Some(Bop::parse(other)?);
                }
            }
        }
    }
    Some(Op::Isetp {
        cmp: cmp?,
        signed,
        bop: bop.unwrap_or(Bop::And),
        extended,
    })
}

/// `SHF.L|R[.U32|.S32|.U64|.S64][.HI][.W]`.
fn shf(ins: &Instruction) -> Option<Op> {
    let (mut left, mut high, mut signed, mut wide, mut wrap) = (None, false, false, false, false);
    for modifier in &ins.modifiers {
        match modifier.as_str() {
            "L" => left = Some(true),
            "R" => left = Some(false),
            "HI" => high = true,
            "W" => wrap = true,
            "U32" => {}
            "S32" => signed = true,
            "U64" => wide = true,
            "S64" => (signed, wide) = (true, true),
            _ => return None,
        }
    }
    Some(Op::Shf {
        left: left?,
        high,
        signed,
        wide,
        wrap,
    })
}

/// `HFMA2[.MMA] Rd, -RZ, RZ, h1, h0`: `-0·0 + (h1, h0)`, the way sm_75+ code moves a 32-bit
/// constant into a register (`HFMA2.MMA R5, -RZ, RZ, 0, 2.384185791015625e-07` sets R5 to 4):
/// the word whose high half is h1's and low half h0's binary16 bits.
fn half_pair_move(ins: &Instruction, sources: &[Operand]) -> Option<u32> {
    if ins.modifiers.iter().any(|m| m != "MMA") {
        return None;
    }
    let [a, b, high, low] = sources else { return None };
    let zero = |o: &Operand| {
        o.reg()
            .is_some_and(|r| r.reg == Register::General(RZ) && r.suffixes.is_empty())
    };
    let half = |o: &Operand| match o {
        Operand::Int(v) => binary16(*v as f64),
        Operand::Float(x) => binary16(*x),
        _ => None,
    };
    if !zero(a) || !zero(b) {
        return None;
    }
    Some(u32::from(half(high)?) << 16 | u32::from(half(low)?))
}

/// The binary16 bits of `x`, when `x` is exactly a binary16 number.
pub(super) fn binary16(x: f64) -> Option<u16> {
    let f = x as f32;
    if f64::from(f) != x && !x.is_nan() {
        return None;
    }
    let bits = f.to_bits();
    let sign = ((bits >> 16) & 0x8000) as u16;
    let exponent = ((bits >> 23) & 0xff) as i32 - 127;
    let mantissa = bits & 0x7f_ffff;
    if f.is_nan() {
        return Some(sign | 0x7e00);
    }
    if f.is_infinite() {
        return Some(sign | 0x7c00);
    }
    if f == 0.0 {
        return Some(sign);
    }
    if (-14..=15).contains(&exponent) {
        // Normal: 10 mantissa bits of the 23.
        if mantissa & 0x1fff != 0 {
            return None;
        }
        return Some(sign | ((exponent + 15) as u16) << 10 | (mantissa >> 13) as u16);
    }
    // Subnormal: x = m · 2^-24 with m below 2^10.
    let shift = u32::try_from(-exponent - 1).ok()?;
    let full = 0x80_0000 | mantissa;
    if shift >= 32 || full & ((1 << shift) - 1) != 0 || (full >> shift) >= 0x400 {
        return None;
    }
    Some(sign | (full >> shift) as u16)
}

/// Removes the `-` of the first three value inputs (the adder applies it, carries included).
fn take_negation(values: &mut [Value]) -> [bool; 3] {
    let mut negate = [false; 3];
    for (n, v) in negate.iter_mut().zip(values.iter_mut()) {
        *n = std::mem::take(&mut v.negate);
    }
    negate
}

fn immediates(values: &[Value]) -> bool {
    values
        .iter()
        .all(|v| matches!(v.source, Source::Imm(_)) && !v.negate && !v.invert)
}

/// `.B1`, `.B2`, `.B3` of `P2R`/`R2P`: the byte the predicates map to.
fn byte_shift(ins: &Instruction) -> u32 {
    ins.modifiers
        .iter()
        .find_map(|m| match m.as_str() {
            "B1" => Some(8),
            "B2" => Some(16),
            "B3" => Some(24),
            _ => None,
        })
        .unwrap_or(0)
}
