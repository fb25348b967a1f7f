//! SASS in, model parameters out: `hetsim kernel analyze` (seed 004, chapter 7's "dedicated
//! tool that parses the SASS of a kernel and outputs the data").
//!
//! - [`sass`] parses `cuobjdump -sass` listings and the thesis's numbered format;
//! - [`cfg`](mod@cfg) builds the control-flow graph and finds loops;
//! - [`capability`] reads compute capabilities (`sm_90`), the [`Arch`] of a listing;
//! - [`arch`] classifies instructions by pipe per architecture;
//! - [`counts`] counts per-warp instructions statically, as polynomials in trip counts;
//! - [`emulate`] runs a launch's warps on the integer, predicate and uniform instructions to
//!   find trip counts, branch outcomes and the 32-byte sectors of every global access;
//! - [`latency`] computes the latency bound on the kernel execution graph (section 5.2.2);
//! - [`analysis`] ties them into one [`Report`], whose `parameters` plug into the Volkov model.

pub mod analysis;
pub mod arch;
pub mod capability;
pub mod cfg;
pub mod counts;
pub mod emulate;
pub mod error;
pub mod latency;
pub mod poly;
pub mod regs;
pub mod sass;

pub use analysis::{analyze, select_kernel, CalibratedLatencies, Options, Parameters, Quantity, Report};
pub use arch::{Arch, ArchChoice, Pipe};
pub use emulate::{Arg, Launch};
pub use error::{Error, Result};
pub use sass::{parse, Listing};
