//! hetsim-models: the analytic performance models of hetsim, pure functions without I/O.
//!
//! Each model reads named inputs ([`Params`]) and returns its intermediate values, the
//! columns of the paper's worked tables, not only the final figure. [`evaluate`] dispatches
//! by [`ModelName`], for the CLI, the scripts and the server alike.

pub mod calibrate;
pub mod catalog;
pub mod data_file;
pub mod hierarchy;
pub mod hong_kim;
pub mod nccl;
pub mod nelder_mead;
pub mod occupancy;
pub mod params;
pub mod queueing;
pub mod transfer;
pub mod transit;
pub mod uncertainty;
pub mod units;
pub mod volkov;
pub mod wang_lou;

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

pub use params::{ParamError, Params, Scalar};

/// The models callable by name (`hetsim model NAME`, and from scripts).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModelName {
    Volkov,
    GmemThroughput,
    Transfer,
    HongKim,
    WangLou,
    Transit,
    Occupancy,
    Queueing,
}

impl ModelName {
    pub const ALL: [ModelName; 8] = [
        ModelName::Volkov,
        ModelName::GmemThroughput,
        ModelName::Transfer,
        ModelName::HongKim,
        ModelName::WangLou,
        ModelName::Transit,
        ModelName::Occupancy,
        ModelName::Queueing,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ModelName::Volkov => "volkov",
            ModelName::GmemThroughput => "gmem-throughput",
            ModelName::Transfer => "transfer",
            ModelName::HongKim => "hong-kim",
            ModelName::WangLou => "wang-lou",
            ModelName::Transit => "transit",
            ModelName::Occupancy => "occupancy",
            ModelName::Queueing => "queueing",
        }
    }

    /// Where the model comes from, for help texts and tables.
    pub fn citation(self) -> &'static str {
        match self {
            ModelName::Volkov => "Volkov/Gajger kernel time, seed 004 eqs. 4.1-4.6",
            ModelName::GmemThroughput => "global-memory throughput per SM, seed 004 eq. 4.7",
            ModelName::Transfer => "transfer time, seed 004 eq. 5.5",
            ModelName::HongKim => "Hong & Kim MWP-CWP, seed 000 eqs. 5-27",
            ModelName::WangLou => "Wang & Lou L2 extension, seed 003 eqs. 20-22",
            ModelName::Transit => "transit model, seed 001 sections 2.2-2.4",
            ModelName::Occupancy => "CUDA occupancy calculator rules, seed 004 section 4.4.1",
            ModelName::Queueing => "Volkov's bounds joined by loaded latency (seed 004 eqs. 4.1-4.6, seed 000 MWP), calibrated on measurements",
        }
    }
}

impl fmt::Display for ModelName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An unknown model name, with the closest known one.
#[derive(Clone, Debug, PartialEq)]
pub struct UnknownModel {
    pub name: String,
    pub hint: Option<String>,
}

impl fmt::Display for UnknownModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let known: Vec<_> = ModelName::ALL.iter().map(|m| m.as_str()).collect();
        write!(f, "unknown model `{}`", self.name)?;
        if let Some(h) = &self.hint {
            write!(f, "; did you mean `{h}`?")?;
        }
        write!(f, " (known: {})", known.join(", "))
    }
}

impl std::error::Error for UnknownModel {}

impl FromStr for ModelName {
    type Err = UnknownModel;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let normalized = s.replace('_', "-").to_lowercase();
        ModelName::ALL
            .into_iter()
            .find(|m| m.as_str() == normalized)
            .ok_or_else(|| UnknownModel {
                name: s.to_owned(),
                hint: params::closest(s, ModelName::ALL.iter().map(|m| m.as_str())),
            })
    }
}

/// The output of one model, serialized as that model's flat object of intermediates.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Evaluation {
    Volkov(volkov::Output),
    GmemThroughput(volkov::GmemOutput),
    Transfer(transfer::Output),
    HongKim(hong_kim::Output),
    WangLou(wang_lou::Output),
    Transit(transit::Output),
    Occupancy(occupancy::Output),
    Queueing(queueing::Output),
}

impl Evaluation {
    /// The headline figure and what limits it, in words.
    pub fn summary(&self) -> String {
        match self {
            Evaluation::Volkov(o) => format!(
                "kernel time {:.6e} s ({:.3} ms), limited by {}",
                o.seconds,
                o.seconds * 1e3,
                o.limiter.as_str()
            ),
            Evaluation::GmemThroughput(o) => {
                format!("GMEMThroughput {:.4} bytes/cycle/SM", o.gmem_throughput)
            }
            Evaluation::Transfer(o) => {
                format!("transfer time {:.6e} s ({:.3} ms)", o.seconds, o.seconds * 1e3)
            }
            Evaluation::HongKim(o) => format!(
                "{:.2} cycles with synchronization (eq. {} applied), {:.6e} s",
                o.exec_cycles_with_synch, o.case, o.seconds
            ),
            Evaluation::WangLou(o) => format!(
                "{:.2} cycles with synchronization (Wang & Lou eq. {} applied), {:.6e} s",
                o.hong_kim.exec_cycles_with_synch, o.hong_kim.case, o.hong_kim.seconds
            ),
            Evaluation::Transit(o) => format!(
                "{} bound: memory throughput {:.6}, computation throughput {:.6}",
                o.bound.as_str(),
                o.ms_throughput,
                o.cs_throughput
            ),
            Evaluation::Occupancy(o) => format!(
                "{} warps/SM, {} blocks/SM, occupancy {:.0} %, limited by {}",
                o.active_warps_per_sm,
                o.active_blocks_per_sm,
                o.occupancy * 100.0,
                o.limiter.as_str()
            ),
            Evaluation::Queueing(o) => format!(
                "kernel time {:.6e} s ({:.3} ms), limited by {}, {:.1} warps/SM resident",
                o.seconds,
                o.seconds * 1e3,
                o.limiter.as_str(),
                o.active_warps_per_sm
            ),
        }
    }
}

/// Reads `params` as the inputs of `model` and evaluates it.
pub fn evaluate(model: ModelName, params: Params) -> Result<Evaluation, ParamError> {
    Ok(match model {
        ModelName::Volkov => Evaluation::Volkov(volkov::evaluate(&volkov::Input::from_params(params)?)),
        ModelName::GmemThroughput => {
            Evaluation::GmemThroughput(volkov::GmemInput::from_params(params)?.evaluate())
        }
        ModelName::Transfer => {
            Evaluation::Transfer(transfer::evaluate(&transfer::Input::from_params(params)?))
        }
        ModelName::HongKim => Evaluation::HongKim(hong_kim::evaluate(&hong_kim::Input::from_params(params)?)),
        ModelName::WangLou => Evaluation::WangLou(wang_lou::evaluate(&wang_lou::Input::from_params(params)?)),
        ModelName::Transit => Evaluation::Transit(transit::evaluate(&transit::Input::from_params(params)?)),
        ModelName::Occupancy => {
            Evaluation::Occupancy(occupancy::evaluate(&occupancy::Input::from_params(params)?))
        }
        ModelName::Queueing => {
            Evaluation::Queueing(queueing::evaluate(&queueing::Input::from_params(params)?))
        }
    })
}
