//! Reading listings: `cuobjdump -sass` output (kernels, architectures, header flags, control
//! words) and the thesis's numbered format, down to each instruction's guard, opcode,
//! modifiers and operands.

use super::{
    Address, Control, Guard, Instruction, Kernel, Listing, Operand, RegOperand, Register, PT, RZ, URZ,
};
use crate::capability::Arch;
use crate::error::{Error, Result};

/// Parses a listing in either format. The thesis format is recognised by its numbered lines.
pub fn parse(text: &str) -> Result<Listing> {
    if looks_numbered(text) {
        parse_numbered(text)
    } else {
        parse_cuobjdump(text)
    }
}

/// A comment line of the numbered format (`//` or `#`).
fn is_comment(line: &str) -> bool {
    line.starts_with("//") || line.starts_with('#')
}

fn looks_numbered(text: &str) -> bool {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !is_comment(l))
        .is_some_and(|l| {
            l.split_once('.')
                .is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        })
}

/// Maxwell/Pascal code: a control word before every three instructions, so instruction
/// `i` (0-based) sits at byte `8 · (4·⌊i/3⌋ + 1 + i mod 3)`.
pub fn maxwell_address(index: usize) -> u64 {
    8 * (4 * (index / 3) + 1 + index % 3) as u64
}

fn parse_numbered(text: &str) -> Result<Listing> {
    let mut instructions: Vec<Instruction> = Vec::new();
    let mut first_line = 0;
    let mut open_pair: Option<usize> = None;
    for (number, raw) in text.lines().enumerate() {
        let line = number + 1;
        let trimmed = raw.trim();
        if trimmed.is_empty() || is_comment(trimmed) {
            continue;
        }
        let (index, rest) = trimmed
            .split_once('.')
            .filter(|(n, _)| n.bytes().all(|b| b.is_ascii_digit()) && !n.is_empty())
            .ok_or_else(|| {
                Error::at(
                    line,
                    "expected a numbered instruction such as `22.   FADD R5, R0, R5;`",
                )
            })?;
        let expected = instructions.len() + 1;
        if index.parse::<usize>().ok() != Some(expected) {
            return Err(Error::at(
                line,
                format!("expected instruction number {expected}, found `{index}`"),
            ));
        }
        if first_line == 0 {
            first_line = line;
        }
        let mut body = rest.trim();
        let opens = body.starts_with('{');
        if opens {
            body = body[1..].trim_start();
        }
        let closes = body.ends_with('}');
        if closes {
            body = body[..body.len() - 1].trim_end();
        }
        let mut instruction = parse_instruction(body, line)?;
        instruction.address = maxwell_address(instructions.len());
        if opens {
            open_pair = Some(instructions.len());
        }
        if closes {
            match open_pair.take() {
                Some(first) if first + 1 == instructions.len() => instructions[first].dual_issue_with_next = true,
                _ => return Err(Error::at(line, "`}` closes no `{` on the line before: a dual-issued pair is two consecutive instructions")),
            }
        }
        instructions.push(instruction);
    }
    if instructions.is_empty() {
        return Err(Error::at(1, "the listing holds no instruction"));
    }
    Ok(Listing {
        kernels: vec![Kernel {
            name: String::new(),
            demangled: None,
            arch: None,
            line: first_line,
            instructions,
        }],
    })
}

fn parse_cuobjdump(text: &str) -> Result<Listing> {
    let mut kernels: Vec<Kernel> = Vec::new();
    let mut section_arch: Option<Arch> = None;
    let mut open_pair = false;
    // The instruction whose upper encoding word the next encoding-only line holds.
    let mut awaiting_upper_word: Option<usize> = None;
    for (number, raw) in text.lines().enumerate() {
        let line = number + 1;
        let trimmed = raw.trim();
        if trimmed.is_empty() {
            continue;
        }
        if let Some(rest) = trimmed.strip_prefix("code for ") {
            section_arch = Some(rest.trim().parse().map_err(|e: String| Error::at(line, e))?);
            continue;
        }
        if let Some(rest) = trimmed.strip_prefix("arch = ") {
            section_arch = Some(rest.trim().parse().map_err(|e: String| Error::at(line, e))?);
            continue;
        }
        if let Some(name) = trimmed.strip_prefix("Function : ") {
            awaiting_upper_word = None;
            let name = name.trim().to_string();
            kernels.push(Kernel {
                demangled: demangle(&name),
                name,
                arch: section_arch,
                line,
                instructions: Vec::new(),
            });
            continue;
        }
        if let Some(flags) = trimmed.strip_prefix(".headerflags") {
            if let (Some(kernel), Some(arch)) = (kernels.last_mut(), Arch::from_header_flags(flags)) {
                kernel.arch = Some(arch);
            }
            continue;
        }
        let Some(rest) = trimmed.strip_prefix("/*") else {
            continue; // `Fatbin elf code:`, `........`, `.section` and other decorations
        };
        let Some((address, rest)) = rest.split_once("*/") else {
            return Err(Error::at(line, "an unterminated `/*` comment"));
        };
        let Ok(address) = u64::from_str_radix(address.trim(), 16) else {
            // An encoding-only line: `/* 0x000fe20000000800 */`, on sm_70+ the upper word of
            // the instruction above it, which holds its scheduling bits.
            if let (Some(ins), Some(word)) = (awaiting_upper_word.take(), hex_word(address)) {
                if let Some(instruction) = kernels.last_mut().and_then(|k| k.instructions.get_mut(ins)) {
                    instruction.control = Some(Control::from_upper_word(word));
                }
            }
            continue;
        };
        let mut body = rest.split("/*").next().unwrap_or("").trim();
        let opens = body.starts_with('{');
        if opens {
            body = body[1..].trim_start();
        }
        let closes = body.ends_with('}');
        if closes {
            body = body[..body.len() - 1].trim_end();
        }
        if body.is_empty() {
            continue;
        }
        let instruction = parse_instruction(body, line)?;
        let kernel = match kernels.last_mut() {
            Some(k) => k,
            None => {
                kernels.push(Kernel {
                    name: String::new(),
                    demangled: None,
                    arch: section_arch,
                    line,
                    instructions: Vec::new(),
                });
                kernels.last_mut().expect("just pushed")
            }
        };
        if closes {
            if !open_pair {
                return Err(Error::at(line, "`}` closes no `{`"));
            }
            if let Some(prev) = kernel.instructions.last_mut() {
                prev.dual_issue_with_next = true;
            }
            open_pair = false;
        }
        if opens {
            open_pair = true;
        }
        if kernel.arch.is_some_and(|a| a.major >= 7) {
            awaiting_upper_word = Some(kernel.instructions.len());
        }
        kernel.instructions.push(Instruction {
            address,
            ..instruction
        });
    }
    kernels.retain(|k| !k.instructions.is_empty());
    if kernels.is_empty() {
        return Err(Error::at(
            1,
            "no SASS instruction found: expected the output of `cuobjdump -sass` or a numbered listing",
        ));
    }
    Ok(Listing { kernels })
}

/// The value of `0x` and 16 hex digits.
fn hex_word(text: &str) -> Option<u64> {
    let digits = text.trim().strip_prefix("0x").filter(|h| h.len() == 16)?;
    u64::from_str_radix(digits, 16).ok()
}

/// Demangles an Itanium C++ name; `None` for a plain (extern "C") name.
pub fn demangle(name: &str) -> Option<String> {
    if !name.starts_with("_Z") {
        return None;
    }
    cpp_demangle::Symbol::new(name)
        .ok()
        .and_then(|s| s.demangle().ok())
}

/// Parses `@P0 ISETP.GE.AND P0, PT, R5, UR4, PT` (without the trailing `;`).
pub fn parse_instruction(text: &str, line: usize) -> Result<Instruction> {
    let text = text.trim().trim_end_matches(';').trim();
    let (guard, text) = match text.strip_prefix('@') {
        Some(rest) => {
            let (g, rest) = rest
                .split_once(char::is_whitespace)
                .ok_or_else(|| Error::at(line, "a guard `@P0` with no instruction after it"))?;
            let (negated, name) = match g.strip_prefix('!') {
                Some(n) => (true, n),
                None => (false, g),
            };
            let reg = parse_register(name)
                .filter(|r| matches!(r, Register::Predicate(_) | Register::UniformPredicate(_)))
                .ok_or_else(|| {
                    Error::at(
                        line,
                        format!("guard `@{g}`: expected a predicate register such as P0 or !UP1"),
                    )
                })?;
            (Some(Guard { negated, reg }), rest.trim())
        }
        None => (None, text),
    };
    let (mnemonic, rest) = match text.split_once(char::is_whitespace) {
        Some((m, r)) => (m, r.trim()),
        None => (text, ""),
    };
    if mnemonic.is_empty() || !mnemonic.bytes().next().is_some_and(|b| b.is_ascii_uppercase()) {
        return Err(Error::at(
            line,
            format!("expected an opcode such as `FADD`, found `{text}`"),
        ));
    }
    let mut parts = mnemonic.split('.');
    let opcode = parts.next().unwrap_or_default().to_string();
    let modifiers = parts.map(str::to_string).collect();
    let operands = split_operands(rest)
        .into_iter()
        .map(|o| parse_operand(o).map_err(|e| Error::at(line, format!("operand `{o}`: {e}"))))
        .collect::<Result<Vec<_>>>()?;
    Ok(Instruction {
        address: 0,
        line,
        guard,
        opcode,
        modifiers,
        operands,
        dual_issue_with_next: false,
        control: None,
    })
}

/// Splits on commas outside brackets.
fn split_operands(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (i, ch) in text.char_indices() {
        match ch {
            '[' | '(' | '{' => depth += 1,
            ']' | ')' | '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push(text[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    let last = text[start..].trim();
    if !last.is_empty() {
        out.push(last);
    }
    out
}

/// `R12`, `RZ`, `UR4`, `P0`, `UPT`, `B1`, `CC`.
pub fn parse_register(name: &str) -> Option<Register> {
    let number = |s: &str| s.parse::<u8>().ok();
    match name {
        "RZ" => return Some(Register::General(RZ)),
        "URZ" => return Some(Register::Uniform(URZ)),
        "PT" => return Some(Register::Predicate(PT)),
        "UPT" => return Some(Register::UniformPredicate(PT)),
        "CC" => return Some(Register::ConditionCode),
        _ => {}
    }
    if let Some(n) = name.strip_prefix("UR") {
        return number(n).filter(|&n| n < URZ).map(Register::Uniform);
    }
    if let Some(n) = name.strip_prefix("UP") {
        return number(n).filter(|&n| n < PT).map(Register::UniformPredicate);
    }
    if let Some(n) = name.strip_prefix('R') {
        return number(n).filter(|&n| n < RZ).map(Register::General);
    }
    if let Some(n) = name.strip_prefix('P') {
        return number(n).filter(|&n| n < PT).map(Register::Predicate);
    }
    if let Some(n) = name.strip_prefix('B') {
        return number(n).filter(|&n| n < 16).map(Register::Barrier);
    }
    None
}

fn parse_int(text: &str) -> Option<i64> {
    let (negative, digits) = match text.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let value = match digits.strip_prefix("0x").or_else(|| digits.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16).ok()? as i64,
        None if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) => {
            digits.parse::<i64>().ok()?
        }
        None => return None,
    };
    Some(if negative { value.wrapping_neg() } else { value })
}

fn parse_float(text: &str) -> Option<f64> {
    match text.trim_start_matches('+') {
        "INF" => Some(f64::INFINITY),
        "-INF" => Some(f64::NEG_INFINITY),
        "QNAN" | "-QNAN" | "NAN" => Some(f64::NAN),
        t if t.contains('.') || t.contains('e') || t.contains('E') => t.parse().ok(),
        _ => None,
    }
}

fn parse_reg_operand(text: &str) -> Option<RegOperand> {
    let mut t = text;
    let mut negated = false;
    let mut inverted = false;
    let mut absolute = false;
    loop {
        if let Some(r) = t.strip_prefix('-') {
            negated = true;
            t = r;
        } else if let Some(r) = t.strip_prefix('!').or_else(|| t.strip_prefix('~')) {
            inverted = true;
            t = r;
        } else {
            break;
        }
    }
    if let Some(inner) = t.strip_prefix('|').and_then(|r| r.strip_suffix('|')) {
        absolute = true;
        t = inner;
    }
    let mut parts = t.split('.');
    let reg = parse_register(parts.next()?)?;
    let suffixes = parts.map(str::to_string).collect();
    Some(RegOperand {
        reg,
        negated,
        inverted,
        absolute,
        suffixes,
    })
}

/// The inside of `[ … ]`: `R2.64+0x10`, `R2+UR4-0x8`, `UR4`, `0x40`.
fn parse_address(inner: &str) -> std::result::Result<Address, String> {
    let mut address = Address {
        base: None,
        uniform: None,
        offset: 0,
        descriptor: None,
    };
    let mut term_start = 0;
    let bytes = inner.as_bytes();
    let mut terms = Vec::new();
    for i in 1..=bytes.len() {
        if i == bytes.len() || ((bytes[i] == b'+' || bytes[i] == b'-') && i > term_start) {
            terms.push(&inner[term_start..i]);
            term_start = i;
        }
    }
    for term in terms {
        let term = term.trim();
        let (sign, body) = match term.strip_prefix('+') {
            Some(b) => (1, b.trim()),
            None => match term.strip_prefix('-') {
                Some(b) => (-1, b.trim()),
                None => (1, term),
            },
        };
        if body.is_empty() {
            continue;
        }
        if let Some(v) = parse_int(body) {
            address.offset += sign * v;
        } else if let Some(r) = parse_reg_operand(body) {
            match r.reg {
                Register::Uniform(_) if address.uniform.is_none() => address.uniform = Some(r),
                Register::General(_) if address.base.is_none() => address.base = Some(r),
                _ => return Err(format!("unexpected register `{body}` in an address")),
            }
        } else {
            return Err(format!(
                "expected a register or an offset in an address, found `{body}`"
            ));
        }
    }
    Ok(address)
}

fn parse_operand(text: &str) -> std::result::Result<Operand, String> {
    let text = text.trim();
    if let Some(rest) = text.strip_prefix("desc[") {
        let (descriptor, rest) = rest.split_once(']').ok_or("an unclosed `desc[`")?;
        let descriptor = parse_register(descriptor.trim())
            .ok_or_else(|| format!("`desc[{descriptor}]`: expected a uniform register"))?;
        let inner = rest
            .trim()
            .strip_prefix('[')
            .and_then(|r| r.strip_suffix(']'))
            .ok_or("expected `desc[URn][address]`")?;
        let mut address = parse_address(inner)?;
        address.descriptor = Some(descriptor);
        return Ok(Operand::Memory(address));
    }
    if let Some(inner) = text.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
        return Ok(Operand::Memory(parse_address(inner)?));
    }
    if let Some(c) = parse_constant(text)? {
        return Ok(c);
    }
    if let Some(r) = parse_reg_operand(text) {
        return Ok(Operand::Reg(r));
    }
    if let Some(v) = parse_int(text) {
        return Ok(Operand::Int(v));
    }
    if let Some(x) = parse_float(text) {
        return Ok(Operand::Float(x));
    }
    if text.starts_with("SR_") || text == "SRZ" {
        return Ok(Operand::Special(text.to_string()));
    }
    if text.is_empty() {
        return Err("an empty operand".to_string());
    }
    if text.contains(['[', ']', '{', '}', '(', ')']) {
        return Err(
            "expected a register, an immediate, `c[bank][offset]` or `[address]`: unbalanced brackets"
                .to_string(),
        );
    }
    Ok(Operand::Other(text.to_string()))
}

/// `c[0x0][0x210]`, `-c[0x0][0x4].H1`, `|c[0x3][R2]|`, `cx[UR4][R0]`.
fn parse_constant(text: &str) -> std::result::Result<Option<Operand>, String> {
    let mut t = text;
    let negated = if let Some(r) = t.strip_prefix('-') {
        t = r;
        true
    } else {
        false
    };
    let absolute = if let Some(inner) = t.strip_prefix('|').and_then(|r| r.strip_suffix('|')) {
        t = inner;
        true
    } else {
        false
    };
    let Some(rest) = t.strip_prefix("c[").or_else(|| t.strip_prefix("cx[")) else {
        return Ok(None);
    };
    let (bank, rest) = rest.split_once(']').ok_or("an unclosed `c[`")?;
    let bank = parse_int(bank.trim())
        .and_then(|b| u32::try_from(b).ok())
        .unwrap_or(0);
    // Maxwell's cuobjdump writes `c[0x0] [0x8]`.
    let rest = rest
        .trim_start()
        .strip_prefix('[')
        .ok_or("expected `c[bank][offset]`")?;
    let (inner, suffix) = rest
        .split_once(']')
        .ok_or("an unclosed offset in `c[bank][offset]`")?;
    let address = parse_address(inner)?;
    let suffixes = suffix
        .split('.')
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect();
    Ok(Some(Operand::Constant {
        bank,
        address,
        negated,
        absolute,
        suffixes,
    }))
}
