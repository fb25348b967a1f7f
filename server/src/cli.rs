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
    /// Simulate an application (Rhai) on a system model (TOML or JSON), locally.
    #[command(after_help = "Example (the thesis scenario, seed 004 Figure 5.23):\n  \
hetsim run --app examples/gajger/app.rhai --system examples/gajger/gtx970.toml \\\n    \
--var occupancy=64 --var computeIntensity=128 --var blockSize=256 --var numElements=400000000\n\n\
Without --label, every label of the system runs at its capacity (count × multiplicity).\n\
A variable's type is inferred: integer, else float, else true/false, else string.")]
    Run(RunArgs),
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
pub struct RunArgs {
    /// The application model: a Rhai script run once per process.
    #[arg(long, value_name = "FILE.rhai")]
    pub app: PathBuf,
    /// The system model: nodes, links, components, computational models.
    #[arg(long, value_name = "FILE.toml")]
    pub system: PathBuf,
    /// Processes of a label, e.g. `--label GPU=2` (repeatable).
    #[arg(long = "label", value_name = "NAME=COUNT")]
    pub labels: Vec<String>,
    /// A run variable, e.g. `--var blockSize=256` (repeatable).
    #[arg(long = "var", value_name = "NAME=VALUE")]
    pub vars: Vec<String>,
    /// Algorithm of collectives that name none: binomial (default) or flat.
    #[arg(long, default_value = "binomial")]
    pub algorithm: String,
    /// Print the results as one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Write the trace of spans (process, kind, start, end, detail) as JSON.
    #[arg(long, value_name = "FILE.json")]
    pub trace: Option<PathBuf>,
    /// Draw a Gantt chart of the processes as SVG.
    #[arg(long, value_name = "FILE.svg")]
    pub timeline: Option<PathBuf>,
    /// Sandbox: wall time a script may run between two sim.* calls [s].
    #[arg(long, default_value_t = 1.0)]
    pub max_slice_seconds: f64,
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
