//! What each modelled integer and predicate instruction computes in one lane, as a pure
//! function of its inputs. The warp applies it to every lane whose inputs are all known;
//! uniform-datapath instructions (`UIADD3`, `ULEA`, …) use the same functions once per warp.

/// A comparison (`ISETP.GE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    True,
    False,
}

impl Cmp {
    pub fn parse(m: &str) -> Option<Cmp> {
        Some(match m {
            "EQ" => Cmp::Eq,
            "NE" => Cmp::Ne,
            "LT" => Cmp::Lt,
            "LE" => Cmp::Le,
            "GT" => Cmp::Gt,
            "GE" => Cmp::Ge,
            "T" => Cmp::True,
            "F" => Cmp::False,
            _ => return None,
        })
    }

    fn holds(self, ordering: std::cmp::Ordering) -> bool {
        use std::cmp::Ordering::*;
        match self {
            Cmp::Eq => ordering == Equal,
            Cmp::Ne => ordering != Equal,
            Cmp::Lt => ordering == Less,
            Cmp::Le => ordering != Greater,
            Cmp::Gt => ordering == Greater,
            Cmp::Ge => ordering != Less,
            Cmp::True => true,
            Cmp::False => false,
        }
    }

    /// The high-word step of a 64-bit comparison (`ISETP.*.EX`): `low` is the same
    /// comparison of the low words, made unsigned by the instruction before.
    fn holds_extended(self, ordering: std::cmp::Ordering, low: bool) -> bool {
        use std::cmp::Ordering::*;
        match self {
            Cmp::Eq => ordering == Equal && low,
            Cmp::Ne => ordering != Equal || low,
            Cmp::Lt | Cmp::Le => ordering == Less || (ordering == Equal && low),
            Cmp::Gt | Cmp::Ge => ordering == Greater || (ordering == Equal && low),
            Cmp::True => true,
            Cmp::False => false,
        }
    }
}

/// How a comparison's result combines with a predicate (`ISETP.GE.AND`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bop {
    And,
    Or,
    Xor,
}

impl Bop {
    pub fn parse(m: &str) -> Option<Bop> {
        Some(match m {
            "AND" => Bop::And,
            "OR" => Bop::Or,
            "XOR" => Bop::Xor,
            _ => return None,
        })
    }

    fn apply(self, a: bool, b: bool) -> bool {
        match self {
            Bop::And => a && b,
            Bop::Or => a || b,
            Bop::Xor => a ^ b,
        }
    }
}

/// Maxwell's two-source logic (`LOP.AND`, `LOP32I.XOR`, `LOP.PASS_B`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Logic {
    And,
    Or,
    Xor,
    PassB,
}

/// `IMAD`'s forms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImadMode {
    /// `a·b + c` (`.MOV`, `.IADD`, `.SHL` are this with a constant operand).
    Low,
    /// The high word of `a·b + c64`, `c64` the pair `c+1:c`.
    High { signed: bool },
    /// The 64-bit `a·b + c64` into a register pair.
    Wide { signed: bool },
}

/// XMAD's flags (Maxwell's 16×16-bit multiply-add).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Xmad {
    /// `a.H1`: the high half of a.
    pub a_high: bool,
    /// `b.H1`.
    pub b_high: bool,
    /// `.PSL`: the product shifted left by 16.
    pub psl: bool,
    /// `.MRG`: the result's high half replaced by b's low half.
    pub mrg: bool,
    /// `.CBCC`: c plus b shifted left by 16.
    pub cbcc: bool,
    /// `.CHI` / `.CLO`: only c's high or low half is added.
    pub c_half: Option<bool>,
}

/// A modelled operation. Value inputs are in operand order unless a variant says otherwise;
/// predicate inputs likewise (a carry-in from the sm_5x–6x condition code counts as one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// Copies its value inputs to the destination words (`MOV`, `S2R`, `LDC.64`, `CS2R`).
    Mov,
    /// `IMAD`: a, b, c (and c's pair word for `.HI`/`.WIDE`); `.X` adds predicate 0.
    Imad {
        mode: ImadMode,
        carry_in: bool,
    },
    /// `IMUL`: a·b, low or high word.
    Imul {
        high: bool,
        signed: bool,
    },
    /// `IADD3`, `IADD`, `IADD32I`, `VIADD`: the sum of the value inputs (a negated one counts
    /// as `~x + 1`, or as `~x` in the `.X` forms, whose `+1` arrives through the carry) plus
    /// every predicate input as a carry-in; flag outputs are the sum's bits 32 and 33.
    Add {
        negate: [bool; 3],
        extended: bool,
    },
    /// `ISCADD`: `(a << s) + b`; flag 0 is the carry.
    Iscadd,
    Xmad(Xmad),
    /// `ISETP`: flag 0 = `cmp(a, b) bop p0`, flag 1 = `!cmp(a, b) bop p0`; `.EX` takes the low
    /// words' result from predicate 1.
    Isetp {
        cmp: Cmp,
        signed: bool,
        bop: Bop,
        extended: bool,
    },
    /// `PSETP.first.second`: flag 0 = `(p0 first p1) second p2`, flag 1 with the inner result negated.
    Psetp {
        first: Bop,
        second: Bop,
    },
    /// `PLOP3.LUT`: flags from lookup tables (value inputs 0 and 1) of predicates 0–2.
    Plop3,
    /// `LEA`: `(a << s) + b`; `.HI`: the high word of `(hi:a) << s` plus b (hi is an operand,
    /// or a's sign with `.SX32`); `.X` adds predicate 0; flag 0 is the carry.
    Lea {
        high: bool,
        sign_extend: bool,
        carry_in: bool,
    },
    /// `SHF`: a funnel shift of the pair `c:a` by b, giving its low or high word.
    Shf {
        left: bool,
        high: bool,
        signed: bool,
        wide: bool,
        wrap: bool,
    },
    Shl {
        wrap: bool,
    },
    Shr {
        signed: bool,
        wrap: bool,
    },
    /// `LOP3.LUT`: a three-input lookup table (value input 3); flag 0 = result ≠ 0.
    Lop3,
    Lop(Logic),
    /// `SEL`: p0 ? a : b.
    Sel,
    /// `IMNMX`: p0 ? min : max.
    Imnmx {
        signed: bool,
    },
    Iabs,
    Popc,
    /// `FLO`: the highest set bit (of a's complement for a negative signed a), or the shift
    /// that brings it to bit 31 (`.SH`); all ones when there is none.
    Flo {
        signed: bool,
        shift: bool,
    },
    Brev,
    /// `PRMT`: byte `i` of the result is byte `sel[4i..4i+3]` of `b:a`, sign-replicated when
    /// `sel`'s bit `4i+3` is set.
    Prmt,
    /// `BFE`: the field of `len` bits at `pos` (b = pos | len << 8).
    Bfe {
        signed: bool,
    },
    /// `BFI`: a's low `len` bits inserted into c at `pos` (b = pos | len << 8).
    Bfi,
    /// `SGXT`: a's low b bits, sign- or zero-extended.
    Sgxt {
        signed: bool,
    },
    /// `BMSK`: b ones starting at bit a.
    Bmsk {
        wrap: bool,
    },
    /// `P2R`: a with the bits of `mask << shift` replaced by the predicates P0–P6.
    P2r {
        shift: u32,
    },
}

/// Value inputs beyond which no instruction reads.
pub const MAX_VALUES: usize = 6;
/// Predicate inputs beyond which no instruction reads (P2R reads P0–P6).
pub const MAX_PREDS: usize = 7;

/// What one lane's operation produces: up to two words (a register pair) and two flags
/// (predicate results, carries).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Out {
    pub words: [u32; 2],
    pub flags: [bool; 2],
}

fn word(x: u32) -> Out {
    Out {
        words: [x, 0],
        flags: [false; 2],
    }
}

fn pair(x: u64) -> Out {
    Out {
        words: [x as u32, (x >> 32) as u32],
        flags: [false; 2],
    }
}

fn sum(x: u64) -> Out {
    Out {
        words: [x as u32, 0],
        flags: [x >> 32 & 1 == 1, x >> 33 & 1 == 1],
    }
}

fn lut3(lut: u32, a: u32, b: u32, c: u32) -> u32 {
    (0..8).filter(|i| lut >> i & 1 == 1).fold(0, |acc, i| {
        let pick = |bit: u32, x: u32| if i >> bit & 1 == 1 { x } else { !x };
        acc | (pick(2, a) & pick(1, b) & pick(0, c))
    })
}

fn lut_bool(lut: u32, a: bool, b: bool, c: bool) -> bool {
    lut >> ((u32::from(a) << 2) | (u32::from(b) << 1) | u32::from(c)) & 1 == 1
}

fn product(a: u32, b: u32, signed: bool) -> u64 {
    if signed {
        (i64::from(a as i32) * i64::from(b as i32)) as u64
    } else {
        u64::from(a) * u64::from(b)
    }
}

fn compare(a: u32, b: u32, signed: bool) -> std::cmp::Ordering {
    if signed {
        (a as i32).cmp(&(b as i32))
    } else {
        a.cmp(&b)
    }
}

fn half(x: u32, high: bool) -> u32 {
    if high {
        x >> 16
    } else {
        x & 0xffff
    }
}

fn shift_left(x: u32, s: u32) -> u32 {
    x.checked_shl(s).unwrap_or(0)
}

fn shift_right(x: u32, s: u32, signed: bool) -> u32 {
    if signed {
        ((x as i32) >> s.min(31)) as u32
    } else {
        x.checked_shr(s).unwrap_or(0)
    }
}

fn funnel(op: Op, lo: u32, s: u32, hi: u32) -> u32 {
    let Op::Shf {
        left,
        high,
        signed,
        wide,
        wrap,
    } = op
    else {
        return 0;
    };
    let limit = if wide { 64 } else { 32 };
    let s = if wrap { s & (limit - 1) } else { s.min(limit) };
    let pair = (u64::from(hi) << 32) | u64::from(lo);
    let shifted = if left {
        pair.checked_shl(s).unwrap_or(0)
    } else if signed {
        ((pair as i64) >> s.min(63)) as u64
    } else {
        pair.checked_shr(s).unwrap_or(0)
    };
    if high {
        (shifted >> 32) as u32
    } else {
        shifted as u32
    }
}

fn xmad(x: Xmad, a: u32, b: u32, c: u32) -> u32 {
    let mut product = half(a, x.a_high).wrapping_mul(half(b, x.b_high));
    if x.psl {
        product <<= 16;
    }
    let addend = match x.c_half {
        Some(high) => half(c, high),
        None if x.cbcc => c.wrapping_add(b << 16),
        None => c,
    };
    let result = product.wrapping_add(addend);
    if x.mrg {
        (result & 0xffff) | (b << 16)
    } else {
        result
    }
}

fn flo(a: u32, signed: bool, shift: bool) -> u32 {
    let x = if signed && (a as i32) < 0 { !a } else { a };
    if x == 0 {
        return u32::MAX;
    }
    let bit = 31 - x.leading_zeros();
    if shift {
        31 - bit
    } else {
        bit
    }
}

fn prmt(a: u32, sel: u32, b: u32) -> u32 {
    let bytes = ((u64::from(b) << 32) | u64::from(a)).to_le_bytes();
    (0..4).fold(0, |acc, i| {
        let nibble = sel >> (4 * i) & 0xf;
        let byte = bytes[(nibble & 7) as usize];
        let byte = if nibble & 8 != 0 {
            if byte & 0x80 != 0 {
                0xff
            } else {
                0
            }
        } else {
            byte
        };
        acc | u32::from(byte) << (8 * i)
    })
}

fn field_mask(len: u32) -> u32 {
    if len >= 32 {
        u32::MAX
    } else {
        (1 << len) - 1
    }
}

fn bfe(a: u32, b: u32, signed: bool) -> u32 {
    let (pos, len) = (b & 0xff, b >> 8 & 0xff);
    if len == 0 {
        return 0;
    }
    let field = shift_right(a, pos, false) & field_mask(len);
    if signed && len < 32 && field >> (len - 1) & 1 == 1 {
        field | !field_mask(len)
    } else {
        field
    }
}

fn bfi(a: u32, b: u32, c: u32) -> u32 {
    let (pos, len) = (b & 0xff, b >> 8 & 0xff);
    let mask = shift_left(field_mask(len), pos);
    (c & !mask) | (shift_left(a, pos) & mask)
}

fn sgxt(a: u32, bits: u32, signed: bool) -> u32 {
    let bits = bits.min(32);
    if bits == 0 {
        return 0;
    }
    let field = a & field_mask(bits);
    if signed && bits < 32 && field >> (bits - 1) & 1 == 1 {
        field | !field_mask(bits)
    } else {
        field
    }
}

/// The adder's term for one operand: negation is two's complement, or one's complement in an
/// extended (`.X`) addition whose `+1` arrives as the low word's carry.
fn term(x: u32, negate: bool, extended: bool) -> u64 {
    match (negate, extended) {
        (false, _) => u64::from(x),
        (true, true) => u64::from(!x),
        (true, false) => u64::from(!x) + 1,
    }
}

/// One lane of `op` on value inputs `v` and predicate inputs `p`. Inlined into the warp's
/// loop over its lanes, which calls it for every lane of every instruction emulated.
#[inline(always)]
pub fn eval(op: Op, v: &[u32; MAX_VALUES], p: &[bool; MAX_PREDS]) -> Out {
    let carry = |on: bool| u64::from(on && p[0]);
    match op {
        Op::Mov => Out {
            words: [v[0], v[1]],
            flags: [false; 2],
        },
        Op::Imad { mode, carry_in } => match mode {
            ImadMode::Low => word(
                v[0].wrapping_mul(v[1])
                    .wrapping_add(v[2])
                    .wrapping_add(carry(carry_in) as u32),
            ),
            ImadMode::High { signed } => {
                let c = (u64::from(v[3]) << 32) | u64::from(v[2]);
                word((product(v[0], v[1], signed).wrapping_add(c) >> 32) as u32)
            }
            ImadMode::Wide { signed } => {
                let c = (u64::from(v[3]) << 32) | u64::from(v[2]);
                pair(product(v[0], v[1], signed).wrapping_add(c))
            }
        },
        Op::Imul { high, signed } => {
            let x = product(v[0], v[1], signed);
            word(if high { (x >> 32) as u32 } else { x as u32 })
        }
        Op::Add { negate, extended } => {
            let terms: u64 = (0..3).map(|i| term(v[i], negate[i], extended)).sum();
            let carries: u64 = p.iter().take(2).map(|&c| u64::from(c)).sum();
            sum(terms + if extended { carries } else { 0 })
        }
        Op::Iscadd => sum(u64::from(shift_left(v[0], v[2] & 31)) + u64::from(v[1])),
        Op::Xmad(x) => word(xmad(x, v[0], v[1], v[2])),
        Op::Isetp {
            cmp,
            signed,
            bop,
            extended,
        } => {
            let ordering = compare(v[0], v[1], signed);
            let r = if extended {
                cmp.holds_extended(ordering, p[1])
            } else {
                cmp.holds(ordering)
            };
            Out {
                words: [0; 2],
                flags: [bop.apply(r, p[0]), bop.apply(!r, p[0])],
            }
        }
        Op::Psetp { first, second } => {
            let r = first.apply(p[0], p[1]);
            Out {
                words: [0; 2],
                flags: [second.apply(r, p[2]), second.apply(!r, p[2])],
            }
        }
        Op::Plop3 => Out {
            words: [0; 2],
            flags: [lut_bool(v[0], p[0], p[1], p[2]), lut_bool(v[1], p[0], p[1], p[2])],
        },
        Op::Lea {
            high,
            sign_extend,
            carry_in,
        } => {
            let shifted = if high {
                let (hi, s) = if sign_extend {
                    (((v[0] as i32) >> 31) as u32, v[2])
                } else {
                    (v[2], v[3])
                };
                let pair = (u64::from(hi) << 32) | u64::from(v[0]);
                (pair.checked_shl(s & 63).unwrap_or(0) >> 32) as u32
            } else {
                shift_left(v[0], v[2] & 31)
            };
            sum(u64::from(shifted) + u64::from(v[1]) + carry(carry_in))
        }
        Op::Shf { .. } => word(funnel(op, v[0], v[1], v[2])),
        Op::Shl { wrap } => word(shift_left(v[0], if wrap { v[1] & 31 } else { v[1] })),
        Op::Shr { signed, wrap } => word(shift_right(v[0], if wrap { v[1] & 31 } else { v[1] }, signed)),
        Op::Lop3 => {
            let r = lut3(v[3], v[0], v[1], v[2]);
            Out {
                words: [r, 0],
                flags: [r != 0, false],
            }
        }
        Op::Lop(logic) => word(match logic {
            Logic::And => v[0] & v[1],
            Logic::Or => v[0] | v[1],
            Logic::Xor => v[0] ^ v[1],
            Logic::PassB => v[1],
        }),
        Op::Sel => word(if p[0] { v[0] } else { v[1] }),
        Op::Imnmx { signed } => {
            let less = compare(v[0], v[1], signed) == std::cmp::Ordering::Less;
            word(if less == p[0] { v[0] } else { v[1] })
        }
        Op::Iabs => word((v[0] as i32).unsigned_abs()),
        Op::Popc => word(v[0].count_ones()),
        Op::Flo { signed, shift } => word(flo(v[0], signed, shift)),
        Op::Brev => word(v[0].reverse_bits()),
        Op::Prmt => word(prmt(v[0], v[1], v[2])),
        Op::Bfe { signed } => word(bfe(v[0], v[1], signed)),
        Op::Bfi => word(bfi(v[0], v[1], v[2])),
        Op::Sgxt { signed } => word(sgxt(v[0], v[1], signed)),
        Op::Bmsk { wrap } => {
            let width = if wrap { v[1] & 31 } else { v[1].min(32) };
            word(shift_left(field_mask(width), if wrap { v[0] & 31 } else { v[0] }))
        }
        Op::P2r { shift } => {
            let mask = shift_left(v[1] & 0x7f, shift);
            let preds = (0..7).fold(0u32, |acc, i| acc | u32::from(p[i]) << i);
            word((v[0] & !mask) | (shift_left(preds, shift) & mask))
        }
    }
}

#[cfg(test)]
mod tests;
