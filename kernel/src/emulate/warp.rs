//! One warp's registers and how it runs one instruction on some of its lanes.

use super::alu::{eval, MAX_PREDS, MAX_VALUES};
use super::decode::{Access, Decoded, Kind, Pred, Reg, Source, Value, VoteMode, SLOTS};
use super::lanes::{lanes_of, Bits, Lanes, ALL, WARP};
use super::launch::{ConstBank, WarpPlace};

/// The origin of a register nothing has written yet.
pub const NEVER_WRITTEN: u32 = u32::MAX;

/// Lanes an instruction ran on: where its guard held, and where the guard was unknown (there
/// its results are unknown too).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Step {
    pub exec: u32,
    pub unsure: u32,
}

/// A register's contents, whatever its file: a word per lane for `R` (the same word in every
/// lane for `UR`), a bit per lane for predicates and the condition code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Held {
    Words(Lanes),
    Bits(Bits),
}

/// A warp's register files. Each register also remembers which instruction last made it
/// unknown, so that an unresolved branch can name what it depends on.
#[derive(Clone)]
pub struct Warp<'a> {
    place: WarpPlace,
    bank: &'a ConstBank,
    r: Vec<Lanes>,
    ur: [Option<u32>; 63],
    p: [Bits; 7],
    up: [Option<bool>; 7],
    cc: Bits,
    origin: Vec<u32>,
}

impl<'a> Warp<'a> {
    /// A warp at `place`, every register unknown.
    pub fn new(place: WarpPlace, bank: &'a ConstBank) -> Warp<'a> {
        Warp {
            place,
            bank,
            r: Vec::new(),
            ur: [None; 63],
            p: [Bits::UNKNOWN; 7],
            up: [None; 7],
            cc: Bits::UNKNOWN,
            origin: vec![NEVER_WRITTEN; SLOTS],
        }
    }

    /// Lanes that hold a thread.
    pub fn launched(&self) -> u32 {
        self.place.launched
    }

    /// The instruction that last made `reg` unknown ([`NEVER_WRITTEN`] if none did).
    pub fn origin(&self, reg: Reg) -> u32 {
        self.origin[reg.slot()]
    }

    /// What `reg` holds now.
    pub fn held(&self, reg: Reg) -> Held {
        match reg {
            Reg::R(_) | Reg::Ur(_) => Held::Words(self.read_reg(reg)),
            Reg::P(n) => Held::Bits(self.p[n as usize]),
            Reg::Up(n) => Held::Bits(Bits::from_option(self.up[n as usize])),
            Reg::Cc => Held::Bits(self.cc),
        }
    }

    /// Adds `times` × `step` (lane by lane, wrapping) to the known lanes of word register `reg`:
    /// a loop's skipped trips.
    pub fn advance(&mut self, reg: Reg, step: &Lanes, times: u32) {
        match reg {
            Reg::R(n) => {
                let r = self.r_mut(n);
                for lane in lanes_of(r.known) {
                    r.v[lane] = r.v[lane].wrapping_add(step.v[lane].wrapping_mul(times));
                }
            }
            Reg::Ur(n) => {
                if let Some(x) = &mut self.ur[n as usize] {
                    *x = x.wrapping_add(step.v[0].wrapping_mul(times));
                }
            }
            Reg::P(_) | Reg::Up(_) | Reg::Cc => {}
        }
    }

    /// Register `n`, the file grown to hold it: a warp starts with no register (each unknown
    /// until written), since a kernel writes a few dozen of the 255 and a launch's grouping
    /// starts thousands of warps.
    fn r_mut(&mut self, n: u8) -> &mut Lanes {
        let n = usize::from(n);
        if n >= self.r.len() {
            self.r.resize(n + 1, Lanes::UNKNOWN);
        }
        &mut self.r[n]
    }

    fn read_reg(&self, reg: Reg) -> Lanes {
        match reg {
            Reg::R(n) => self.r.get(usize::from(n)).copied().unwrap_or(Lanes::UNKNOWN),
            Reg::Ur(n) => Lanes::from_option(self.ur[n as usize]),
            Reg::P(_) | Reg::Up(_) | Reg::Cc => Lanes::UNKNOWN,
        }
    }

    /// A value input in every lane, decorations applied.
    pub fn read_value(&self, value: &Value) -> Lanes {
        let mut x = match value.source {
            Source::Reg(None) => Lanes::splat(0),
            Source::Reg(Some(r)) => self.read_reg(r),
            Source::Imm(v) => Lanes::splat(v),
            Source::Const(word) => Lanes::from_option(word),
            Source::ConstAt { index, offset } => {
                let index = self.read_reg(index);
                let mut out = Lanes::UNKNOWN;
                for lane in lanes_of(index.known) {
                    let at = offset.checked_add(i64::from(index.v[lane]));
                    out.set(lane, at.and_then(|at| self.bank.word(at)));
                }
                out
            }
            Source::Special(s) => s.read(&self.place),
            Source::Unknown => Lanes::UNKNOWN,
        };
        // Most inputs carry no decoration; each that is set is applied to every lane in turn.
        let lanes = &mut x.v;
        if let Some(high) = value.half {
            lanes
                .iter_mut()
                .for_each(|v| *v = if high { *v >> 16 } else { *v & 0xffff });
        }
        if value.absolute {
            lanes.iter_mut().for_each(|v| *v = (*v as i32).unsigned_abs());
        }
        if value.negate {
            lanes.iter_mut().for_each(|v| *v = v.wrapping_neg());
        }
        if value.invert {
            lanes.iter_mut().for_each(|v| *v = !*v);
        }
        x
    }

    /// A predicate input in every lane (`PT` holds everywhere).
    pub fn read_pred(&self, pred: &Pred) -> Bits {
        let bits = match pred.reg {
            None => Bits::splat(true),
            Some(Reg::P(n)) => self.p[n as usize],
            Some(Reg::Up(n)) => Bits::from_option(self.up[n as usize]),
            Some(Reg::Cc) => self.cc,
            Some(Reg::R(_) | Reg::Ur(_)) => Bits::UNKNOWN,
        };
        if pred.invert {
            bits.not()
        } else {
            bits
        }
    }

    /// Writes `result` to `reg` in `lanes` and unknown in `unsure`; a uniform register takes
    /// the lowest lane's value.
    fn write_word(&mut self, reg: Option<Reg>, result: &Lanes, lanes: u32, unsure: u32, origin: u32) {
        let Some(reg) = reg else { return };
        let unknown = match reg {
            Reg::R(n) => {
                let r = self.r_mut(n);
                if lanes == ALL {
                    r.v = result.v;
                } else {
                    for lane in lanes_of(lanes) {
                        r.v[lane] = result.v[lane];
                    }
                }
                r.known = (r.known & !(lanes | unsure)) | (result.known & lanes & !unsure);
                (r.known & (lanes | unsure)) != (lanes | unsure)
            }
            Reg::Ur(n) => {
                let u = &mut self.ur[n as usize];
                if unsure != 0 {
                    *u = None;
                } else if let Some(lane) = lanes_of(lanes).next() {
                    *u = result.get(lane);
                }
                u.is_none()
            }
            Reg::P(_) | Reg::Up(_) | Reg::Cc => return,
        };
        if unknown {
            self.origin[reg.slot()] = origin;
        }
    }

    fn write_flag(&mut self, reg: Option<Reg>, result: Bits, lanes: u32, unsure: u32, origin: u32) {
        let Some(reg) = reg else { return };
        let merge = |old: &mut Bits| {
            for lane in lanes_of(lanes) {
                old.set(lane, result.get(lane));
            }
            for lane in lanes_of(unsure) {
                old.set(lane, None);
            }
            (old.known & (lanes | unsure)) != (lanes | unsure)
        };
        let unknown = match reg {
            Reg::P(n) => merge(&mut self.p[n as usize]),
            Reg::Cc => merge(&mut self.cc),
            Reg::Up(n) => {
                let u = &mut self.up[n as usize];
                if unsure != 0 {
                    *u = None;
                } else if let Some(lane) = lanes_of(lanes).next() {
                    *u = result.get(lane);
                }
                u.is_none()
            }
            Reg::R(_) | Reg::Ur(_) => return,
        };
        if unknown {
            self.origin[reg.slot()] = origin;
        }
    }

    /// Makes `reg` unknown in `lanes`.
    fn clobber(&mut self, reg: Reg, lanes: u32, origin: u32) {
        if lanes == 0 {
            return;
        }
        match reg {
            Reg::R(_) | Reg::Ur(_) => self.write_word(Some(reg), &Lanes::UNKNOWN, 0, lanes, origin),
            Reg::P(_) | Reg::Up(_) | Reg::Cc => self.write_flag(Some(reg), Bits::UNKNOWN, 0, lanes, origin),
        }
    }

    /// The instruction that made an input unknown in some of `lanes`: the register's origin,
    /// or `own` when the input itself is unknowable (an unfilled constant, a clock).
    fn input_origin(&self, d: &Decoded, lanes: u32, own: u32) -> u32 {
        for v in &d.values {
            if self.read_value(v).known & lanes != lanes {
                return match v.source {
                    Source::Reg(Some(r)) => self.origin(r),
                    Source::ConstAt { index, .. } if self.read_reg(index).known & lanes != lanes => {
                        self.origin(index)
                    }
                    _ => own,
                };
            }
        }
        for p in &d.preds {
            if let Some(r) = p.reg {
                if self.read_pred(p).known & lanes != lanes {
                    return self.origin(r);
                }
            }
        }
        own
    }

    /// The lanes of `mask` that `d`'s guard selects, or may select.
    pub fn guard(&self, d: &Decoded, mask: u32) -> Step {
        let guard = self.read_pred(&d.guard);
        Step {
            exec: mask & guard.true_lanes(),
            unsure: mask & guard.unknown_lanes(),
        }
    }

    /// Runs decoded instruction `index` on the lanes `step` selects.
    pub fn execute(&mut self, d: &Decoded, index: u32, step: Step) {
        // A uniform instruction computes once per warp, in lane 0.
        let (lanes, unsure) = if d.uniform {
            (u32::from(step.exec != 0), u32::from(step.unsure != 0))
        } else {
            (step.exec, step.unsure)
        };
        let guard_origin = d.guard.reg.map_or(index, |r| self.origin(r));
        match &d.kind {
            Kind::Compute(op) => self.compute(d, *op, index, lanes, unsure, guard_origin),
            Kind::Vote(mode) => self.vote(d, *mode, index, step, lanes, unsure, guard_origin),
            Kind::R2ur => {
                let value = self.read_value(&d.values[0]);
                let uniform = if step.unsure == 0 {
                    value.uniform(step.exec)
                } else {
                    None
                };
                let origin = if step.unsure != 0 {
                    guard_origin
                } else {
                    self.input_origin(d, step.exec, index)
                };
                if let Some(&dest) = d.words.first() {
                    self.write_word(
                        dest,
                        &Lanes::from_option(uniform),
                        u32::from(step.exec != 0),
                        0,
                        origin,
                    );
                }
            }
            Kind::R2p { shift } => self.r2p(d, *shift, index, lanes, unsure, guard_origin),
            Kind::Memory(_) | Kind::Unmodeled | Kind::Call => {
                for &reg in &d.clobbers {
                    self.clobber(reg, lanes | unsure, index);
                }
            }
            Kind::Branch | Kind::Exit | Kind::Unfollowed => {}
        }
    }

    fn compute(
        &mut self,
        d: &Decoded,
        op: super::alu::Op,
        index: u32,
        lanes: u32,
        unsure: u32,
        guard_origin: u32,
    ) {
        let mut values = [Lanes::splat(0); MAX_VALUES];
        let mut preds = [Bits::splat(false); MAX_PREDS];
        let mut known = ALL;
        for (slot, v) in values.iter_mut().zip(&d.values) {
            *slot = self.read_value(v);
            known &= slot.known;
        }
        for (slot, p) in preds.iter_mut().zip(&d.preds) {
            *slot = self.read_pred(p);
            known &= slot.known;
        }
        let mut words = [Lanes::UNKNOWN; 2];
        let mut flags = [Bits::UNKNOWN; 2];
        let (n_values, n_preds) = (d.values.len().min(MAX_VALUES), d.preds.len().min(MAX_PREDS));
        let (mut v, mut p) = ([0u32; MAX_VALUES], [false; MAX_PREDS]);
        for lane in lanes_of(lanes & known) {
            // Each lane's inputs picked from the operands' lanes (copying the operands, close
            // to a kilobyte, for every lane was two fifths of an analysis's time), only as
            // many as the instruction reads: most read no predicate, none all seven.
            for (slot, value) in v.iter_mut().zip(&values[..n_values]) {
                *slot = value.v[lane];
            }
            for (slot, pred) in p.iter_mut().zip(&preds[..n_preds]) {
                *slot = pred.value >> lane & 1 == 1;
            }
            let out = eval(op, &v, &p);
            for (w, x) in words.iter_mut().zip(out.words) {
                w.v[lane] = x;
            }
            for (f, x) in flags.iter_mut().zip(out.flags) {
                f.value |= u32::from(x) << lane;
            }
        }
        for w in &mut words {
            w.known = lanes & known;
        }
        for f in &mut flags {
            f.known = lanes & known;
        }
        let origin = if lanes & !known != 0 {
            self.input_origin(d, lanes & !known, index)
        } else {
            guard_origin
        };
        for (&dest, word) in d.words.iter().zip(&words) {
            self.write_word(dest, word, lanes, unsure, origin);
        }
        for (&dest, flag) in d.flags.iter().zip(flags) {
            self.write_flag(dest, flag, lanes, unsure, origin);
        }
    }

    /// `VOTE`/`VOTEU`: the ballot of the input predicate over the lanes the guard selects.
    #[allow(clippy::too_many_arguments)]
    fn vote(
        &mut self,
        d: &Decoded,
        mode: VoteMode,
        index: u32,
        step: Step,
        lanes: u32,
        unsure: u32,
        guard_origin: u32,
    ) {
        let input = self.read_pred(&d.preds[0]);
        let known = step.unsure == 0 && input.known & step.exec == step.exec;
        let ballot = input.value & step.exec;
        let result = match mode {
            VoteMode::Any => ballot != 0,
            VoteMode::All => ballot == step.exec,
            VoteMode::Eq => ballot == 0 || ballot == step.exec,
        };
        let (word, flag) = if known {
            (Lanes::splat(ballot), Bits::splat(result))
        } else {
            (Lanes::UNKNOWN, Bits::UNKNOWN)
        };
        let origin = if step.unsure != 0 {
            guard_origin
        } else {
            self.input_origin(d, step.exec, index)
        };
        if let Some(&dest) = d.words.first() {
            self.write_word(dest, &word, lanes, unsure, origin);
        }
        if let Some(&dest) = d.flags.first() {
            self.write_flag(dest, flag, lanes, unsure, origin);
        }
    }

    /// `R2P PR, Ra, mask`: predicate `i` from bit `i + shift` of Ra, for each bit `i` of mask.
    fn r2p(&mut self, d: &Decoded, shift: u32, index: u32, lanes: u32, unsure: u32, guard_origin: u32) {
        let source = self.read_value(&d.values[0]);
        let mask = self.read_value(&d.values[1]);
        let Some(mask) = mask.uniform(ALL) else {
            for n in 0..7 {
                self.clobber(Reg::P(n), lanes | unsure, index);
            }
            return;
        };
        let origin = if lanes & !source.known != 0 {
            self.input_origin(d, lanes & !source.known, index)
        } else {
            guard_origin
        };
        for n in (0..7u8).filter(|n| mask >> n & 1 == 1) {
            let mut bits = Bits::UNKNOWN;
            for lane in lanes_of(lanes) {
                bits.set(
                    lane,
                    source.get(lane).map(|x| x >> (u32::from(n) + shift) & 1 == 1),
                );
            }
            self.write_flag(Some(Reg::P(n)), bits, lanes, unsure, origin);
        }
    }

    /// The byte addresses of a memory access in each of `lanes`, or `None` if any is unknown.
    /// Each register is read once for the whole warp: this runs for every access emulated.
    pub fn addresses(&self, access: &Access, lanes: u32) -> Option<Addresses> {
        let base = self.wide(access.base);
        let uniform = self.wide(access.uniform);
        let mut out = Addresses::default();
        for lane in lanes_of(lanes) {
            let address = wide_at(&base, lane)?
                .wrapping_add(wide_at(&uniform, lane)?)
                .wrapping_add(access.offset as u64);
            out.push(address);
        }
        Some(out)
    }

    /// The low and high words of a 64-bit register pair (or a lone 32-bit register).
    fn wide(&self, pair: Option<(Reg, Option<Reg>)>) -> Option<(Lanes, Lanes)> {
        pair.map(|(lo, hi)| {
            (
                self.read_reg(lo),
                hi.map_or(Lanes::splat(0), |h| self.read_reg(h)),
            )
        })
    }
}

/// Lane `lane`'s 64-bit value of a register pair read by [`Warp::wide`]; 0 for no pair.
fn wide_at(pair: &Option<(Lanes, Lanes)>, lane: usize) -> Option<u64> {
    let Some((lo, hi)) = pair else { return Some(0) };
    Some(u64::from(hi.get(lane)?) << 32 | u64::from(lo.get(lane)?))
}

/// The addresses of one warp-wide access, one per active lane in lane order, held inline.
#[derive(Debug, Clone, Copy)]
pub struct Addresses {
    lanes: [u64; WARP],
    len: usize,
}

impl Default for Addresses {
    fn default() -> Addresses {
        Addresses {
            lanes: [0; WARP],
            len: 0,
        }
    }
}

impl Addresses {
    fn push(&mut self, address: u64) {
        self.lanes[self.len] = address;
        self.len += 1;
    }

    /// Lane by lane, what was added to `earlier` to give these (wrapping); `None` where the
    /// lanes differ in number.
    pub fn step_from(&self, earlier: &Addresses) -> Option<Addresses> {
        (self.len == earlier.len).then(|| {
            let mut step = *self;
            for (s, e) in step.lanes.iter_mut().zip(&earlier.lanes) {
                *s = s.wrapping_sub(*e);
            }
            step
        })
    }

    /// Moves these addresses on by `step` (wrapping).
    pub fn step_by(&mut self, step: &Addresses) {
        for (a, s) in self.lanes.iter_mut().zip(&step.lanes) {
            *a = a.wrapping_add(*s);
        }
    }

    /// These addresses advanced `times` steps of `step` (wrapping).
    pub fn advanced(&self, step: &Addresses, times: u64) -> Addresses {
        let mut out = *self;
        for (a, s) in out.lanes.iter_mut().zip(&step.lanes) {
            *a = a.wrapping_add(s.wrapping_mul(times));
        }
        out
    }
}

impl PartialEq for Addresses {
    fn eq(&self, other: &Addresses) -> bool {
        **self == **other
    }
}

impl std::ops::Deref for Addresses {
    type Target = [u64];

    fn deref(&self) -> &[u64] {
        &self.lanes[..self.len]
    }
}
