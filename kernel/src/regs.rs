//! Which registers an instruction writes and reads, with 64- and 128-bit operands expanded,
//! for the latency graph (seed 004, section 5.2.2) and the emulator.

use crate::sass::{Instruction, Operand, RegOperand, Register};

/// Opcodes with no destination operand: every operand is read.
fn has_no_destination(opcode: &str) -> bool {
    matches!(
        opcode,
        "STG"
            | "ST"
            | "STS"
            | "STL"
            | "RED"
            | "REDG"
            | "BRA"
            | "BRX"
            | "JMP"
            | "JMX"
            | "EXIT"
            | "RET"
            | "CALL"
            | "JCAL"
            | "BAR"
            | "BSYNC"
            | "WARPSYNC"
            | "NOP"
            | "MEMBAR"
            | "DEPBAR"
            | "ERRBAR"
            | "CCTL"
            | "CCTLL"
            | "YIELD"
            | "KILL"
            | "KIL"
            | "BPT"
            | "NANOSLEEP"
            | "SYNC"
            | "SSY"
            | "PBK"
            | "PCNT"
            | "BRK"
            | "CONT"
            | "SUST"
            | "SURED"
            | "STSM"
            | "LDGDEPBAR"
            | "ARRIVES"
            | "UCGABAR_ARV"
            | "UCGABAR_WAIT"
            | "BREAK"
    )
}

/// How many leading operands are destinations: the result, then predicate results (carries,
/// a comparison's two outputs).
pub fn destination_count(instruction: &Instruction) -> usize {
    if has_no_destination(&instruction.opcode) {
        return 0;
    }
    let ops = &instruction.operands;
    let is_pred = |o: &Operand| {
        o.reg()
            .is_some_and(|r| matches!(r.reg, Register::Predicate(_) | Register::UniformPredicate(_)))
    };
    // `LOP3.LUT P0, R2, …` and `SHFL.IDX PT, R3, …` write a predicate, then a register.
    let predicate_then_register = matches!(instruction.opcode.as_str(), "LOP3" | "SHFL")
        && ops.first().is_some_and(is_pred)
        && ops
            .get(1)
            .is_some_and(|o| o.reg().is_some_and(|r| matches!(r.reg, Register::General(_))));
    if predicate_then_register {
        return 2;
    }
    let max = match instruction.opcode.as_str() {
        // Two predicate results: `ISETP.GE.AND P0, PT, R5, UR4, PT`.
        op if op.ends_with("SETP") || op == "PLOP3" || op == "UPLOP3" || op == "PSETP" => 2,
        // A result and up to two carry-outs: `IADD3 R2, P0, P1, R0, R1, R2`, `LEA R2, P0, …`.
        _ => 3,
    };
    let mut n = usize::from(!ops.is_empty());
    while n < max.min(ops.len()) && is_pred(&ops[n]) && ops.len() > n + 1 {
        n += 1;
    }
    n
}

/// Registers covered by a register operand written or read by `instruction`.
fn expand(
    instruction: &Instruction,
    operand: &RegOperand,
    destination: bool,
) -> impl Iterator<Item = Register> {
    let width = operand.width().max(implied_width(instruction, destination));
    let reg = operand.reg;
    (0..width)
        .map(move |i| reg.offset(i))
        .filter(|r| !r.is_constant())
}

/// Widths that the opcode implies rather than the operand (`IMAD.WIDE` writes a pair,
/// `DADD` reads and writes pairs, `LDG.E.64` writes a pair).
fn implied_width(instruction: &Instruction, destination: bool) -> u8 {
    let op = instruction.opcode.as_str();
    let m = |s: &str| instruction.has_modifier(s);
    if destination && (m("128") && !matches!(op, "STG" | "STS" | "STL" | "ST")) {
        return 4;
    }
    if destination && (m("64") || m("WIDE")) && !matches!(op, "STG" | "STS" | "STL" | "ST") {
        return 2;
    }
    // `CS2R R4, SRZ` clears a pair unless it is `CS2R.32`.
    if destination && op == "CS2R" && !m("32") {
        return 2;
    }
    if matches!(op, "DADD" | "DMUL" | "DFMA" | "DMNMX") {
        return 2;
    }
    if op == "DSETP" && !destination {
        return 2;
    }
    if matches!(op, "STG" | "STS" | "STL" | "ST") && !destination {
        // The data operand of a wide store is a register pair or quad.
        if m("128") {
            return 4;
        }
        if m("64") {
            return 2;
        }
    }
    1
}

/// Registers `instruction` writes, including the condition code (`R2.CC`).
pub fn writes(instruction: &Instruction) -> Vec<Register> {
    let mut out = Vec::new();
    for operand in instruction.operands.iter().take(destination_count(instruction)) {
        if let Some(r) = operand.reg() {
            out.extend(expand(instruction, r, true));
            if r.has_suffix("CC") {
                out.push(Register::ConditionCode);
            }
        }
    }
    if instruction.opcode == "BSSY" {
        out.retain(|r| matches!(r, Register::Barrier(_)));
    }
    out
}

/// Registers `instruction` reads: sources, address registers, the guard predicate and the
/// condition code of `.X` instructions (sm_5x–6x).
pub fn reads(instruction: &Instruction) -> Vec<Register> {
    let mut out = Vec::new();
    if let Some(g) = instruction.guard {
        if !g.reg.is_constant() {
            out.push(g.reg);
        }
    }
    let skip = destination_count(instruction);
    let last = instruction.operands.len().saturating_sub(1);
    for (index, operand) in instruction.operands.iter().enumerate().skip(skip) {
        match operand {
            // `IMAD.WIDE R2, R5, 0x4, R2` adds the pair R2:R3.
            Operand::Reg(r) if index == last && instruction.has_modifier("WIDE") => {
                out.extend([r.reg, r.reg.offset(1)].into_iter().filter(|x| !x.is_constant()))
            }
            Operand::Reg(r) => out.extend(expand(instruction, r, false)),
            Operand::Memory(a) | Operand::Constant { address: a, .. } => {
                for r in a.base.iter().chain(a.uniform.iter()) {
                    out.extend(address_registers(instruction, r));
                }
                if let Some(d) = a.descriptor {
                    out.push(d);
                    out.push(d.offset(1));
                }
            }
            _ => {}
        }
    }
    // Stores write no register: their first operand is an address, read above.
    if instruction.has_modifier("X")
        && instruction
            .operands
            .iter()
            .all(|o| !o.reg().is_some_and(|r| matches!(r.reg, Register::Predicate(_))))
    {
        out.push(Register::ConditionCode);
    }
    out
}

/// `[R2.64]` is a pair; so is a bare `[R2]` of an `.E` (64-bit address) access on sm_5x–6x.
pub fn address_registers(instruction: &Instruction, r: &RegOperand) -> impl Iterator<Item = Register> {
    let width = if r.suffixes.iter().all(|s| s == "reuse") && instruction.has_modifier("E") {
        2
    } else {
        r.width()
    };
    let reg = r.reg;
    (0..width)
        .map(move |i| reg.offset(i))
        .filter(|x| !x.is_constant())
}
