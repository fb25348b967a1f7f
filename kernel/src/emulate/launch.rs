//! The launch as the kernel sees it: where each warp sits (its block and its lanes' thread
//! indices), the special registers, and constant bank 0 (block and grid dimensions, the stack
//! top, the parameters).

use super::lanes::{Lanes, WARP};
use super::{Arg, Launch};
use crate::arch::Arch;
use crate::error::{Error, Result};

/// The most threads a CUDA block may hold.
const MAX_BLOCK_THREADS: u64 = 1024;

/// The value given to the stack pointer's initial value (`c[0x0][0x28]` on sm_70+,
/// `c[0x0][0x20]` on sm_5x–6x): any known value does, since local memory is not counted.
pub const STACK_TOP: u32 = 0x00ff_fc00;

/// Pointer argument `k` points at `(k + 1) << 40`: far apart, and aligned to far more than a
/// 32-byte sector, as `cudaMalloc`'s 256-byte alignment promises.
pub fn pointer_base(k: usize) -> u64 {
    (k as u64 + 1) << 40
}

/// The shape of the launch, and the linear order of its warps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Geometry {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub threads_per_block: u32,
    pub warps_per_block: u32,
    pub warps: u64,
}

/// Where one warp sits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WarpPlace {
    pub ctaid: [u32; 3],
    /// `SR_TID.X/Y/Z` of each lane.
    pub tid: [[u32; WARP]; 3],
    /// Lanes that hold a thread: the last warp of a block whose size is no multiple of 32 is
    /// partial.
    pub launched: u32,
}

impl Geometry {
    /// Checks the dimensions: each at least 1, at most 1024 threads a block.
    pub fn new(launch: &Launch) -> Result<Geometry> {
        for (what, dims) in [("--grid", launch.grid), ("--block", launch.block)] {
            if dims.contains(&0) {
                return Err(Error::new(format!(
                    "{what} {}x{}x{}: every dimension must be at least 1",
                    dims[0], dims[1], dims[2]
                )));
            }
        }
        let threads: u64 = launch.block.iter().map(|&d| u64::from(d)).product();
        if threads > MAX_BLOCK_THREADS {
            return Err(Error::new(format!(
                "--block {}x{}x{} holds {threads} threads: CUDA allows at most {MAX_BLOCK_THREADS}",
                launch.block[0], launch.block[1], launch.block[2]
            )));
        }
        let threads_per_block = threads as u32;
        let warps_per_block = threads_per_block.div_ceil(WARP as u32);
        let warps = launch
            .grid
            .iter()
            .try_fold(u64::from(warps_per_block), |acc, &d| {
                acc.checked_mul(u64::from(d))
            })
            .ok_or_else(|| Error::new("--grid: the launch holds more than 2^64 warps"))?;
        Ok(Geometry {
            grid: launch.grid,
            block: launch.block,
            threads_per_block,
            warps_per_block,
            warps,
        })
    }

    /// The warp space: warps per block, then the grid's x, y and z.
    pub fn extent(&self) -> [u64; 4] {
        [
            u64::from(self.warps_per_block),
            u64::from(self.grid[0]),
            u64::from(self.grid[1]),
            u64::from(self.grid[2]),
        ]
    }

    /// The indices of block `b`'s warps (block-major: block `x + y·gx + z·gx·gy`).
    pub fn warps_of(&self, b: u64) -> std::ops::Range<u64> {
        let per_block = u64::from(self.warps_per_block);
        b * per_block..(b + 1) * per_block
    }

    /// Warp `index` in block-major order: block `x + y·gx + z·gx·gy`, then warp within it.
    pub fn warp(&self, index: u64) -> WarpPlace {
        let per_block = u64::from(self.warps_per_block);
        let block = index / per_block;
        let within = (index % per_block) as u32;
        let [gx, gy, _] = self.grid.map(u64::from);
        let ctaid = [block % gx, block / gx % gy, block / (gx * gy)].map(|c| c as u32);
        let [bx, by, _] = self.block;
        let mut tid = [[0; WARP]; 3];
        let mut launched = 0;
        let first = within * WARP as u32;
        let threads = (first..first + WARP as u32).enumerate();
        for (lane, t) in threads.filter(|&(_, t)| t < self.threads_per_block) {
            launched |= 1 << lane;
            for (axis, c) in [t % bx, t / bx % by, t / (bx * by)].into_iter().enumerate() {
                tid[axis][lane] = c;
            }
        }
        WarpPlace { ctaid, tid, launched }
    }
}

/// A special register that `S2R`, `S2UR` and `CS2R` read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Special {
    Tid(usize),
    Ctaid(usize),
    LaneId,
    /// `SR_LTMASK`, `SR_LEMASK`, `SR_EQMASK`, `SR_GTMASK`, `SR_GEMASK`.
    LaneMask(MaskKind),
    /// `SRZ`, and `SR_CgaCtaId`.
    Zero,
    /// Clocks, SM ids, … : unknown.
    Unknown,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MaskKind {
    Lt,
    Le,
    Eq,
    Gt,
    Ge,
}

impl Special {
    /// `SR_TID.X` → `Tid(0)`; any register the emulator cannot know is `Unknown`.
    pub fn parse(name: &str) -> Special {
        let axis = |s: &str| match s {
            "X" => Some(0),
            "Y" => Some(1),
            "Z" => Some(2),
            _ => None,
        };
        // A launch without thread-block clusters (the only kind emulated) puts each block in a
        // cluster of one, so its rank there (`SR_CgaCtaId`, which sm_90 code shifts into the
        // shared window's address) is 0.
        if name == "SRZ" || name == "SR_CgaCtaId" {
            return Special::Zero;
        }
        if let Some(a) = name.strip_prefix("SR_TID.").and_then(axis) {
            return Special::Tid(a);
        }
        if let Some(a) = name.strip_prefix("SR_CTAID.").and_then(axis) {
            return Special::Ctaid(a);
        }
        match name {
            "SR_LANEID" => Special::LaneId,
            "SR_LTMASK" => Special::LaneMask(MaskKind::Lt),
            "SR_LEMASK" => Special::LaneMask(MaskKind::Le),
            "SR_EQMASK" => Special::LaneMask(MaskKind::Eq),
            "SR_GTMASK" => Special::LaneMask(MaskKind::Gt),
            "SR_GEMASK" => Special::LaneMask(MaskKind::Ge),
            _ => Special::Unknown,
        }
    }

    /// Its value in every lane of the warp at `place`.
    pub fn read(self, place: &WarpPlace) -> Lanes {
        let mut out = Lanes::splat(0);
        for lane in 0..WARP {
            out.v[lane] = match self {
                Special::Tid(a) => place.tid[a][lane],
                Special::Ctaid(a) => place.ctaid[a],
                Special::LaneId => lane as u32,
                Special::LaneMask(kind) => {
                    let eq = 1u32 << lane;
                    match kind {
                        MaskKind::Lt => eq - 1,
                        MaskKind::Le => eq | (eq - 1),
                        MaskKind::Eq => eq,
                        MaskKind::Gt => !(eq | (eq - 1)),
                        MaskKind::Ge => !(eq - 1),
                    }
                }
                Special::Zero => 0,
                Special::Unknown => return Lanes::UNKNOWN,
            };
        }
        out
    }
}

/// Constant bank 0 as the driver fills it for this launch.
///
/// On sm_70 and later the block dimensions (`ntid`) sit at 0x0, 0x4, 0x8 and the grid
/// dimensions (`nctaid`) at 0xc, 0x10, 0x14, the stack top at 0x28; on sm_5x–6x each of these
/// sits 8 bytes further (`ntid.x` at 0x8, as the thesis's Figure 5.2 multiplies `ctaid.x` by
/// `c[0x0][0x8]`) and the stack top at 0x20. The parameters start at [`Arch::param_base`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConstBank {
    bytes: Vec<Option<u8>>,
    params: std::ops::Range<u64>,
}

impl ConstBank {
    pub fn new(arch: Arch, launch: &Launch) -> Result<ConstBank> {
        let mut bank = ConstBank {
            bytes: Vec::new(),
            params: arch.param_base()..arch.param_base(),
        };
        let (dims, stack) = if arch.major <= 6 { (0x8, 0x20) } else { (0x0, 0x28) };
        for axis in 0..3 {
            bank.put(dims + 4 * axis, &launch.block[axis as usize].to_le_bytes());
            bank.put(dims + 0xc + 4 * axis, &launch.grid[axis as usize].to_le_bytes());
        }
        bank.put(stack, &STACK_TOP.to_le_bytes());
        let mut offset = arch.param_base();
        for (k, arg) in launch.args.iter().enumerate() {
            let (align, bytes) = arg_bytes(k, *arg)?;
            offset = offset.next_multiple_of(align);
            bank.put(offset, &bytes);
            offset += bytes.len() as u64;
        }
        bank.params.end = offset;
        Ok(bank)
    }

    fn put(&mut self, offset: u64, bytes: &[u8]) {
        let start = offset as usize;
        if self.bytes.len() < start + bytes.len() {
            self.bytes.resize(start + bytes.len(), None);
        }
        for (slot, b) in self.bytes[start..].iter_mut().zip(bytes) {
            *slot = Some(*b);
        }
    }

    /// The 32-bit word at `offset`, if every byte of it is known.
    pub fn word(&self, offset: i64) -> Option<u32> {
        let start = usize::try_from(offset).ok()?;
        let bytes = self.bytes.get(start..start + 4)?;
        let mut word = [0u8; 4];
        for (w, b) in word.iter_mut().zip(bytes) {
            *w = (*b)?;
        }
        Some(u32::from_le_bytes(word))
    }

    /// Where the parameters start and end.
    pub fn params(&self) -> std::ops::Range<u64> {
        self.params.clone()
    }
}

/// An argument's alignment and bytes: an int as 4 bytes, a float as the 4 bytes of an `f32`,
/// a pointer as its 8-byte symbolic base (`_` carries no type, so 64-bit integers and doubles
/// cannot be given).
fn arg_bytes(k: usize, arg: Arg) -> Result<(u64, Vec<u8>)> {
    Ok(match arg {
        Arg::Int(v) => {
            let word = i32::try_from(v)
                .map(|v| v as u32)
                .or_else(|_| u32::try_from(v))
                .map_err(|_| {
                    Error::new(format!(
                        "--args: argument {} = {v} does not fit 32 bits (emulation lays integer \
                         arguments out as 4-byte ints)",
                        k + 1
                    ))
                })?;
            (4, word.to_le_bytes().to_vec())
        }
        Arg::Float(x) => (4, (x as f32).to_bits().to_le_bytes().to_vec()),
        Arg::Pointer => (8, pointer_base(k).to_le_bytes().to_vec()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn launch(grid: [u32; 3], block: [u32; 3], args: Vec<Arg>) -> Launch {
        Launch {
            grid,
            block,
            args,
            dynamic_shared: 0,
        }
    }

    #[test]
    fn hopper_bank_holds_dims_and_parameters() {
        let l = launch(
            [3, 2, 1],
            [256, 1, 1],
            vec![Arg::Int(1000), Arg::Int(-1), Arg::Pointer, Arg::Pointer],
        );
        let bank = ConstBank::new(Arch::HOPPER, &l).expect("bank");
        assert_eq!(bank.word(0x0), Some(256));
        assert_eq!(bank.word(0x4), Some(1));
        assert_eq!(bank.word(0xc), Some(3));
        assert_eq!(bank.word(0x10), Some(2));
        assert_eq!(bank.word(0x28), Some(STACK_TOP));
        assert_eq!(bank.word(0x210), Some(1000));
        assert_eq!(bank.word(0x214), Some(u32::MAX));
        // The first pointer is aligned to 8 right after the two ints.
        assert_eq!(bank.word(0x218), Some(0));
        assert_eq!(bank.word(0x21c), Some((pointer_base(2) >> 32) as u32));
        assert_eq!(bank.word(0x224), Some((pointer_base(3) >> 32) as u32));
        assert_eq!(bank.word(0x228), None);
        assert_eq!(bank.word(0x208), None, "the memory descriptor is unknown");
        assert_eq!(bank.params(), 0x210..0x228);
    }

    #[test]
    fn maxwell_bank_shifts_dims_by_eight_and_aligns_pointers() {
        let l = launch([7, 1, 1], [128, 2, 1], vec![Arg::Int(5), Arg::Pointer]);
        let bank = ConstBank::new(Arch::MAXWELL, &l).expect("bank");
        assert_eq!(bank.word(0x8), Some(128));
        assert_eq!(bank.word(0xc), Some(2));
        assert_eq!(bank.word(0x14), Some(7));
        assert_eq!(bank.word(0x20), Some(STACK_TOP));
        assert_eq!(bank.word(0x140), Some(5));
        assert_eq!(bank.word(0x144), None, "padding before the 8-aligned pointer");
        assert_eq!(bank.word(0x148), Some(0));
        assert_eq!(bank.word(0x14c), Some(0x200));
    }

    #[test]
    fn oversized_int_and_empty_dims_are_refused() {
        let l = launch([1, 1, 1], [32, 1, 1], vec![Arg::Int(1 << 40)]);
        let e = ConstBank::new(Arch::HOPPER, &l).expect_err("too wide");
        assert!(e.message.contains("argument 1"), "{e}");
        let l = launch([1, 0, 1], [32, 1, 1], vec![]);
        assert!(Geometry::new(&l).is_err());
        let l = launch([1, 1, 1], [32, 64, 1], vec![]);
        assert!(Geometry::new(&l)
            .expect_err("2048 threads")
            .message
            .contains("1024"));
    }

    #[test]
    fn warps_are_block_major_with_partial_last_warps() {
        let g = Geometry::new(&launch([2, 3, 1], [20, 3, 1], vec![])).expect("geometry");
        assert_eq!(g.warps_per_block, 2);
        assert_eq!(g.warps, 12);
        // Warp 5 = block 2 = (0, 1, 0), second warp: threads 32..59 of 60.
        let w = g.warp(5);
        assert_eq!(w.ctaid, [0, 1, 0]);
        assert_eq!(w.launched, (1 << 28) - 1);
        assert_eq!((w.tid[0][0], w.tid[1][0]), (12, 1));
        assert_eq!((w.tid[0][27], w.tid[1][27]), (19, 2));
    }

    #[test]
    fn special_registers() {
        let g = Geometry::new(&launch([4, 1, 1], [64, 1, 1], vec![])).expect("geometry");
        let w = g.warp(3);
        assert_eq!(Special::parse("SR_TID.X").read(&w).get(5), Some(37));
        assert_eq!(Special::parse("SR_CTAID.X").read(&w).get(5), Some(1));
        assert_eq!(Special::parse("SR_LANEID").read(&w).get(5), Some(5));
        assert_eq!(Special::parse("SR_LTMASK").read(&w).get(5), Some(0b11111));
        assert_eq!(Special::parse("SR_GEMASK").read(&w).get(31), Some(1 << 31));
        assert_eq!(Special::parse("SRZ").read(&w).get(0), Some(0));
        assert_eq!(Special::parse("SR_CLOCKLO").read(&w).get(0), None);
    }
}
