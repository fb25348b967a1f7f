//! Wang & Lou's L2-cache extension of Hong & Kim (seed 003, eqs. 20–22).
//!
//! Everything up to MWP, CWP and #Rep is Hong & Kim's ([`crate::hong_kim::Parallelism`]);
//! only the execution cycles change: a warp whose data an earlier warp brought into L2 waits
//! `Mem_L2_cache_hit` instead of `Mem_L2_cache_miss` (= `mem_ld`). #Rep keeps Hong & Kim's
//! eq. 21 (blocks per active block slot), which Wang & Lou's eq. 19 restates.

use serde::Serialize;

use crate::hong_kim::{self, Parallelism, Regime};
use crate::params::{require_positive, ParamError, ParamReader, Params};

#[derive(Clone, Debug, PartialEq)]
pub struct Input {
    pub hong_kim: hong_kim::Input,
    /// L2 hit latency [cycles].
    pub mem_l2_cache_hit: f64,
    /// Instructions before the first memory instruction.
    pub first_comp_period_insts: f64,
}

impl Input {
    pub fn from_params(params: Params) -> Result<Self, ParamError> {
        let mut r = ParamReader::new(params);
        let input = Input {
            hong_kim: hong_kim::Input::read(&mut r)?,
            mem_l2_cache_hit: r.non_negative("mem_l2_cache_hit")?,
            first_comp_period_insts: r.non_negative("first_comp_period_insts")?,
        };
        r.finish()?;
        require_positive("mem_ld", input.hong_kim.mem_ld)?;
        Ok(input)
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Output {
    #[serde(flatten)]
    pub hong_kim: hong_kim::Output,
    /// Mem_L2_cache_hit / Mem_L2_cache_miss.
    pub l2_latency_ratio: f64,
    /// First warp, cold miss (eqs. 20 and 22).
    pub first_warp_cycles: Option<f64>,
    /// Last warp, best case of L2 hits (eqs. 20 and 22).
    pub last_warp_cycles: Option<f64>,
    /// #Cache_hit_mem of eq. 21.
    pub cache_hit_mem: Option<f64>,
}

pub fn evaluate(i: &Input) -> Output {
    let hk = &i.hong_kim;
    let p = Parallelism::of(hk);
    let ratio = i.mem_l2_cache_hit / hk.mem_ld;
    let first_period = i.first_comp_period_insts * hk.issue_cycles;
    let regime = p.regime();
    let (per_rep, first, last, cache_hit_mem) = match regime {
        Regime::NotEnoughWarps => {
            let first = p.mem_cycles + p.comp_cycles;
            let last = first_period * (p.mwp - 1.0) + p.mem_cycles * ratio;
            (first.max(last), Some(first), Some(last), None)
        }
        Regime::MemoryBound => {
            let hits = (p.n / p.mwp - 1.0).max(0.0);
            let cycles =
                p.mem_cycles + p.mem_cycles * ratio * hits + p.comp_cycles / p.mem_insts * (p.mwp - 1.0);
            (cycles, None, None, Some(hits))
        }
        Regime::ComputationBound => {
            let first = p.mem_l + p.comp_cycles;
            let last = first_period * p.n + p.mem_l * ratio;
            (first.max(last), Some(first), Some(last), None)
        }
    };
    let equation = match regime {
        Regime::NotEnoughWarps => 20,
        Regime::MemoryBound => 21,
        Regime::ComputationBound => 22,
    };
    let cycles = per_rep * p.rep;
    Output {
        hong_kim: hong_kim::Output::assemble(hk, p, equation, cycles),
        l2_latency_ratio: ratio,
        first_warp_cycles: first,
        last_warp_cycles: last,
        cache_hit_mem,
    }
}
