//! The command line, as clap reads it.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "hetsim",
    version,
    about = "Simulate parallel and distributed applications on heterogeneous hardware (CPUs, GPUs, links)",
    after_help = "Examples:\n  hetsim model volkov --params examples/models/volkov-gtx970.json\n  hetsim components"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Evaluate one analytic model and show its intermediate values.
    #[command(
        after_help = "Models: volkov, gmem-throughput, transfer, hong-kim, wang-lou, transit, occupancy.\n\
Example:\n  hetsim model volkov --params examples/models/volkov-gtx970.json\n  \
echo '{\"size\": 1e9, \"bandwidth\": 15.8e9}' | hetsim model transfer --params - --json"
    )]
    Model(ModelArgs),
    /// List the hardware catalog: components, their attributes and sources.
    #[command(
        after_help = "Example:\n  hetsim components --kind GPU\n  hetsim components --name \"GTX 970 - gajger\" --json"
    )]
    Components(ComponentsArgs),
    /// Fit model parameters to measurements given as CSV.
    #[command(subcommand)]
    Calibrate(CalibrateCommand),
}

#[derive(Debug, Args)]
pub struct ModelArgs {
    /// The model: volkov, gmem-throughput, transfer, hong-kim, wang-lou, transit or occupancy.
    pub name: String,
    /// A JSON object of the model's input keys, or `-` for standard input.
    #[arg(long, value_name = "FILE")]
    pub params: PathBuf,
    /// Print one JSON object with every output key.
    #[arg(long)]
    pub json: bool,
    /// Also draw the transit figure as SVG (transit model only).
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ComponentsArgs {
    /// Only components of this kind (GPU, CPU, NETWORK).
    #[arg(long)]
    pub kind: Option<String>,
    /// Only the component with this exact name.
    #[arg(long)]
    pub name: Option<String>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub enum CalibrateCommand {
    /// Startup time and λ of a link per direction (eq. 5.5), from CSV `direction,size,seconds`.
    #[command(
        after_help = "Directions: HtD, DtH, DtD, HtH (or HostToDevice, ...). Zero-byte rows are ignored.\n\
Example:\n  hetsim calibrate link examples/calibration/pcie3-gtx970.csv --bandwidth 15.8e9"
    )]
    Link(CalibrateLinkArgs),
    /// Kernel λ (eq. 4.4), from CSV `estimated,measured` [s], the estimate simulated with λ = 1.
    #[command(after_help = "Example:\n  hetsim calibrate kernel examples/calibration/kernel-gtx970.csv")]
    Kernel(CalibrateKernelArgs),
}

#[derive(Debug, Args)]
pub struct CalibrateLinkArgs {
    /// CSV with a header row: direction,size,seconds.
    pub csv: PathBuf,
    /// The link's theoretical bandwidth per direction [bytes/s] (thesis Table 4.3).
    #[arg(long)]
    pub bandwidth: f64,
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct CalibrateKernelArgs {
    /// CSV with a header row: estimated,measured.
    pub csv: PathBuf,
    #[arg(long)]
    pub json: bool,
}
