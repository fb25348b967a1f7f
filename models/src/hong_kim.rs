//! Hong & Kim's MWP–CWP analytical GPU model (seed 000, eqs. 5–27, Table 1 names in lower
//! snake case).

use serde::Serialize;

use crate::params::{ParamError, ParamReader, Params};

#[derive(Clone, Debug, PartialEq)]
pub struct Input {
    /// DRAM round-trip latency [cycles].
    pub mem_ld: f64,
    pub departure_del_uncoal: f64,
    pub departure_del_coal: f64,
    /// SM clock [Hz].
    pub freq: f64,
    /// DRAM bandwidth [bytes/s].
    pub mem_bandwidth: f64,
    pub active_sms: f64,
    pub threads_per_block: f64,
    pub blocks: f64,
    pub active_blocks_per_sm: f64,
    /// Dynamic computation instructions per thread.
    pub comp_insts: f64,
    pub uncoal_mem_insts: f64,
    pub coal_mem_insts: f64,
    pub synch_insts: f64,
    pub uncoal_per_mw: f64,
    pub coal_per_mw: f64,
    pub load_bytes_per_warp: f64,
    pub issue_cycles: f64,
    pub threads_per_warp: f64,
}

impl Input {
    pub fn from_params(params: Params) -> Result<Self, ParamError> {
        let mut r = ParamReader::new(params);
        let input = Self::read(&mut r)?;
        r.finish()?;
        Ok(input)
    }

    /// Reads the Table 1 keys, leaving any other key to the caller (Wang & Lou adds two).
    pub(crate) fn read(r: &mut ParamReader) -> Result<Self, ParamError> {
        let input = Input {
            mem_ld: r.non_negative("mem_ld")?,
            departure_del_uncoal: r.non_negative("departure_del_uncoal")?,
            departure_del_coal: r.non_negative("departure_del_coal")?,
            freq: r.positive("freq")?,
            mem_bandwidth: r.positive("mem_bandwidth")?,
            active_sms: r.positive("active_sms")?,
            threads_per_block: r.positive("threads_per_block")?,
            blocks: r.non_negative("blocks")?,
            active_blocks_per_sm: r.positive("active_blocks_per_sm")?,
            comp_insts: r.non_negative("comp_insts")?,
            uncoal_mem_insts: r.non_negative("uncoal_mem_insts")?,
            coal_mem_insts: r.non_negative("coal_mem_insts")?,
            synch_insts: r.non_negative("synch_insts")?,
            uncoal_per_mw: r.positive("uncoal_per_mw")?,
            coal_per_mw: r.positive_or("coal_per_mw", 1.0)?,
            load_bytes_per_warp: r.positive("load_bytes_per_warp")?,
            issue_cycles: r.positive_or("issue_cycles", 4.0)?,
            threads_per_warp: r.positive_or("threads_per_warp", 32.0)?,
        };
        if input.mem_insts() <= 0.0 {
            // Eqs. 13–14 weigh by the memory instructions and eq. 23 divides by them.
            return Err(ParamError::invalid(
                "uncoal_mem_insts",
                "uncoal_mem_insts + coal_mem_insts > 0 (eqs. 13, 14 and 23 divide by it)",
                input.mem_insts(),
            ));
        }
        let departure_delay = input.departure_delay();
        if departure_delay <= 0.0 {
            return Err(ParamError::invalid(
                "departure_del_uncoal",
                "a departure delay > 0 for the memory instructions given (eq. 16 divides by it)",
                departure_delay,
            ));
        }
        Ok(input)
    }

    pub fn mem_insts(&self) -> f64 {
        self.uncoal_mem_insts + self.coal_mem_insts
    }

    fn weight_uncoal(&self) -> f64 {
        self.uncoal_mem_insts / self.mem_insts()
    }

    fn weight_coal(&self) -> f64 {
        self.coal_mem_insts / self.mem_insts()
    }

    /// Eq. 15.
    fn departure_delay(&self) -> f64 {
        self.departure_del_uncoal * self.uncoal_per_mw * self.weight_uncoal()
            + self.departure_del_coal * self.weight_coal()
    }
}

/// Every intermediate of eqs. 5–21, shared by Hong & Kim's and Wang & Lou's execution cycles.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Parallelism {
    /// Eq. 10.
    pub mem_l_uncoal: f64,
    /// Eq. 11.
    pub mem_l_coal: f64,
    /// Eq. 13.
    pub weight_uncoal: f64,
    /// Eq. 14.
    pub weight_coal: f64,
    /// Eq. 12.
    pub mem_l: f64,
    /// Eq. 15.
    pub departure_delay: f64,
    /// Eq. 16.
    pub mwp_without_bw_full: f64,
    /// Eq. 7 [bytes/s].
    pub bw_per_warp: f64,
    /// Eq. 6.
    pub mwp_peak_bw: f64,
    /// Eq. 5.
    pub mwp: f64,
    pub mem_insts: f64,
    pub total_insts: f64,
    /// Eq. 19.
    pub comp_cycles: f64,
    /// Eq. 18.
    pub mem_cycles: f64,
    /// Eq. 8.
    pub cwp_full: f64,
    /// Eq. 9.
    pub cwp: f64,
    /// Eq. 20: active warps per SM.
    pub n: f64,
    /// Eq. 21.
    pub rep: f64,
}

/// Which regime eqs. 22–24 choose, by the conditions the paper states with them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Regime {
    /// MWP = N and CWP = N: not enough warps (eq. 22).
    NotEnoughWarps,
    /// CWP ≥ MWP or Comp_cycles > Mem_cycles: memory bound (eq. 23).
    MemoryBound,
    /// MWP > CWP: computation bound (eq. 24).
    ComputationBound,
}

impl Regime {
    /// The Hong & Kim equation number.
    pub fn equation(self) -> u8 {
        match self {
            Regime::NotEnoughWarps => 22,
            Regime::MemoryBound => 23,
            Regime::ComputationBound => 24,
        }
    }
}

impl Parallelism {
    pub fn of(i: &Input) -> Self {
        let mem_l_uncoal = i.mem_ld + (i.uncoal_per_mw - 1.0) * i.departure_del_uncoal;
        // Eq. 11 of the paper (lost in the OCR): the coalesced latency grows with the
        // transactions per coalesced warp, 1 by Table 1, which leaves Mem_LD.
        let mem_l_coal = i.mem_ld + (i.coal_per_mw - 1.0) * i.departure_del_coal;
        let weight_uncoal = i.weight_uncoal();
        let weight_coal = i.weight_coal();
        let mem_l = mem_l_uncoal * weight_uncoal + mem_l_coal * weight_coal;
        let departure_delay = i.departure_delay();
        let n = i.active_blocks_per_sm * (i.threads_per_block / i.threads_per_warp).ceil();
        let mwp_without_bw_full = mem_l / departure_delay;
        let mwp_without_bw = mwp_without_bw_full.min(n);
        let bw_per_warp = i.freq * i.load_bytes_per_warp / mem_l;
        let mwp_peak_bw = i.mem_bandwidth / (bw_per_warp * i.active_sms);
        let mwp = mwp_without_bw.min(mwp_peak_bw).min(n);
        let mem_insts = i.mem_insts();
        let total_insts = i.comp_insts + mem_insts;
        let comp_cycles = i.issue_cycles * total_insts;
        let mem_cycles = mem_l_uncoal * i.uncoal_mem_insts + mem_l_coal * i.coal_mem_insts;
        let cwp_full = (mem_cycles + comp_cycles) / comp_cycles;
        Parallelism {
            mem_l_uncoal,
            mem_l_coal,
            weight_uncoal,
            weight_coal,
            mem_l,
            departure_delay,
            mwp_without_bw_full,
            bw_per_warp,
            mwp_peak_bw,
            mwp,
            mem_insts,
            total_insts,
            comp_cycles,
            mem_cycles,
            cwp_full,
            cwp: cwp_full.min(n),
            n,
            rep: i.blocks / (i.active_blocks_per_sm * i.active_sms),
        }
    }

    /// The conditions written beside eqs. 22–24, tested in the paper's order.
    pub fn regime(&self) -> Regime {
        if self.mwp == self.n && self.cwp == self.n {
            Regime::NotEnoughWarps
        } else if self.cwp >= self.mwp || self.comp_cycles > self.mem_cycles {
            Regime::MemoryBound
        } else {
            Regime::ComputationBound
        }
    }

    /// Comp_cycles / #Mem_insts × (MWP − 1): the computation not hidden behind memory.
    fn exposed_computation(&self) -> f64 {
        self.comp_cycles / self.mem_insts * (self.mwp - 1.0)
    }

    /// Eqs. 22–24.
    pub fn exec_cycles_app(&self, regime: Regime) -> f64 {
        let per_rep = match regime {
            Regime::NotEnoughWarps => self.mem_cycles + self.comp_cycles + self.exposed_computation(),
            Regime::MemoryBound => self.mem_cycles * self.n / self.mwp + self.exposed_computation(),
            Regime::ComputationBound => self.mem_l + self.comp_cycles * self.n,
        };
        per_rep * self.rep
    }

    /// Eq. 26.
    pub fn synch_cost(&self, i: &Input) -> f64 {
        self.departure_delay * (self.mwp - 1.0) * i.synch_insts * i.active_blocks_per_sm * self.rep
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Output {
    #[serde(flatten)]
    pub parallelism: Parallelism,
    /// Which of eqs. 22–24 applied.
    pub case: u8,
    pub exec_cycles_app: f64,
    /// Eq. 26.
    pub synch_cost: f64,
    /// Eq. 27.
    pub exec_cycles_with_synch: f64,
    /// Eq. 25.
    pub cpi: f64,
    /// Eq. 27 / freq [s].
    pub seconds: f64,
}

impl Output {
    /// Completes the output from the execution cycles of whichever model computed them.
    pub(crate) fn assemble(i: &Input, parallelism: Parallelism, case: u8, exec_cycles_app: f64) -> Self {
        let synch_cost = parallelism.synch_cost(i);
        let exec_cycles_with_synch = exec_cycles_app + synch_cost;
        let cpi = exec_cycles_app
            / (parallelism.total_insts
                * (i.threads_per_block / i.threads_per_warp)
                * (i.blocks / i.active_sms));
        Output {
            parallelism,
            case,
            exec_cycles_app,
            synch_cost,
            exec_cycles_with_synch,
            cpi,
            seconds: exec_cycles_with_synch / i.freq,
        }
    }
}

pub fn evaluate(i: &Input) -> Output {
    let p = Parallelism::of(i);
    let regime = p.regime();
    let cycles = p.exec_cycles_app(regime);
    Output::assemble(i, p, regime.equation(), cycles)
}
