//! The command line, as clap reads it.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use hetsim_charts::trace::TraceFormat;

mod service;

pub use service::*;

#[derive(Debug, Parser)]
#[command(
    name = "hetsim",
    version,
    about = "Simulate parallel and distributed applications on heterogeneous hardware (CPUs, GPUs, links)",
    after_help = "Examples:\n  hetsim model volkov --params examples/models/volkov-gtx970.json\n  hetsim components\n  \
hetsim catalog list apps --server http://127.0.0.1:8080"
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
Every label of the system runs at its capacity (count × multiplicity) unless --label gives\n\
its count; labels not given keep the system's.\n\
A variable's type is inferred: integer, else float, else a byte size in bytes (400MB, 4GiB),\n\
else true/false, else string.")]
    Run(RunArgs),
    /// Replay a Chakra execution trace (one .et file per rank) on a system model, locally.
    #[command(
        after_help = "Example (a data-parallel step of 8 GPUs, written by hetsim's trace writer):\n  \
hetsim replay examples/traces/dp-step --system examples/training-8gpu/system.toml\n  \
hetsim replay examples/traces/dp-step --system examples/clusters/hgx-h100.toml --compute roofline --json\n\n\
TRACE is a .et file (one rank) or a prefix whose PREFIX.N.et files are ranks 0 to n - 1.\n\
Rank r runs on the r-th process of --label (GPU). docs/TRACES.md tells what is simulated."
    )]
    Replay(ReplayArgs),
    /// Evaluate one analytic model and show its intermediate values.
    #[command(
        after_help = "Models: volkov, gmem-throughput, transfer, hong-kim, wang-lou, transit, occupancy, queueing.\n\
A kernel's time from its SASS by these models: hetsim kernel predict.\n\
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
    #[command(
        subcommand,
        after_help = "Examples:\n  hetsim calibrate gpu examples/validation/data/h100\n  \
hetsim calibrate link examples/calibration/pcie3-gtx970.csv --bandwidth 15.8e9\n  \
hetsim calibrate kernel examples/calibration/kernel-gtx970.csv"
    )]
    Calibrate(CalibrateCommand),
    /// Analyse GPU kernels from their SASS.
    #[command(
        subcommand,
        after_help = "Examples:\n  hetsim kernel analyze examples/kernels/saxpy2-figure-5-2.sass --trip L0=128\n  \
hetsim kernel simulate examples/kernels/saxpy2-sm90.sass --grid 4096 --block 256 \\\n    \
--args 1048576,8,_,_ --gpu \"H100 SXM5 80GB\""
    )]
    Kernel(KernelCommand),
    /// Hold the GPU and transfer models against measurements: MAPE and worst case per file,
    /// cross-validation by block size, and a report with plots of predicted against measured.
    #[command(
        after_help = "Example:\n  hetsim validate                                   # the shipped H100 data\n  \
hetsim validate --data examples/validation/data/h100 --report docs/VALIDATION.md\n\n\
Exits with an error naming them when targets of the report are missed (any table's, the \
cross-validation's too), or naming the file when one the folder promises is missing; a check \
whose file nothing promised is reported as not run."
    )]
    Validate(ValidateArgs),
    /// Serve the HTTP API; without --amqp, also queue and run simulations in-process.
    #[command(
        after_help = "Examples:\n  hetsim serve                      # SQLite hetsim.db, in-process queue and workers\n  \
hetsim serve --db postgres://127.0.0.1/hetsim --amqp amqp://guest:guest@127.0.0.1:5672 --token secret"
    )]
    Serve(ServeArgs),
    /// Take runs of one queue from RabbitMQ, simulate them, write the results to the database.
    #[command(
        after_help = "Example:\n  HETSIM_DB=postgres://db/hetsim HETSIM_AMQP=amqp://broker hetsim worker --queue gpu"
    )]
    Worker(WorkerArgs),
    /// Queue one run on a server.
    #[command(
        after_help = "Example:\n  hetsim submit --server http://127.0.0.1:8080 --queue default --app examples/gajger/app.rhai \\\n    \
--system examples/gajger/gtx970.toml --var occupancy=64 --var computeIntensity=128 --var blockSize=256 \\\n    \
--var numElements=400000000 --wait\n  \
hetsim submit --app-name saxpy2 --system-name gtx970 --var numElements=1000000   # stored on the server\n\n\
A local --system file goes with the .rhai model files and SASS listings it names, so what\n\
runs locally runs on the server."
    )]
    Submit(SubmitArgs),
    /// Queue a sweep: the cartesian product of comma-separated label counts and variable values.
    #[command(
        after_help = "Example:\n  hetsim sweep --server http://127.0.0.1:8080 --queue default --app examples/gajger/app.rhai \\\n    \
--system examples/gajger/gtx970.toml --var blockSize=32,64,128,256 --var computeIntensity=1,8,64 \\\n    \
--var occupancy=64 --var numElements=1000000 --wait"
    )]
    Sweep(SubmitArgs),
    /// Show the result of a run, or the results of a sweep (--csv for a table).
    #[command(after_help = "Example:\n  hetsim results --server http://127.0.0.1:8080 3f6c… --csv")]
    Results(ResultsArgs),
    /// Cancel a run, or every unfinished run of a sweep (a running run stops within a second).
    #[command(after_help = "Example:\n  hetsim cancel --server http://127.0.0.1:8080 3f6c…")]
    Cancel(TargetArgs),
    /// Delete a run or a sweep with its results, traces and logs (cancelling what still runs).
    #[command(after_help = "Example:\n  hetsim delete --server http://127.0.0.1:8080 3f6c…")]
    Delete(TargetArgs),
    /// List, fetch or store what a server stores: components, models, systems and apps.
    #[command(
        subcommand,
        after_help = "Examples:\n  hetsim catalog list apps --server http://127.0.0.1:8080\n  \
hetsim catalog put systems gtx970 examples/gajger/gtx970.toml\n  \
hetsim catalog get systems gtx970 -o out/gtx970.toml"
    )]
    Catalog(CatalogCommand),
    /// Store, list, fetch and delete Chakra execution traces on a server (`hetsim submit
    /// --trace-name NAME` replays one there).
    #[command(
        subcommand,
        after_help = "Examples:\n  hetsim traces put dp-step examples/traces/dp-step\n  hetsim traces list\n  \
hetsim submit --trace-name dp-step --system examples/training-8gpu/system.toml --compute roofline --wait"
    )]
    Traces(TracesCommand),
    /// Make, list and revoke a server's named API tokens, in its database: each token has a
    /// role (read, submit, admin), and the runs it submits name its holder.
    #[command(
        subcommand,
        after_help = "Examples:\n  hetsim token create ana --role submit\n  hetsim token list\n  hetsim token revoke ana"
    )]
    Token(TokenCommand),
}

/// `--detail`: how much a report says (hetsim_scripting::Detail).
#[derive(Clone, Copy, Debug, Default, ValueEnum)]
pub enum DetailLevel {
    #[default]
    Summary,
    Processes,
    Computes,
}

impl From<DetailLevel> for hetsim_scripting::Detail {
    fn from(level: DetailLevel) -> Self {
        match level {
            DetailLevel::Summary => Self::Summary,
            DetailLevel::Processes => Self::Processes,
            DetailLevel::Computes => Self::Computes,
        }
    }
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The application model: a Rhai script run once per process.
    #[arg(long, value_name = "FILE.rhai")]
    pub app: PathBuf,
    /// The system model: nodes, links, components, computational models.
    #[arg(long, value_name = "FILE.toml")]
    pub system: PathBuf,
    /// Processes of a label, e.g. `--label GPU=2` (repeatable); a list (`GPU=1,2,4`) makes a
    /// local sweep.
    #[arg(long = "label", value_name = "NAME=COUNT")]
    pub labels: Vec<String>,
    /// A run variable, e.g. `--var blockSize=256` (repeatable). A list
    /// (`--var blockSize=128,256,512`) makes a local sweep: the product of the lists runs on
    /// this machine's cores and the sweep's table is printed (JSON or CSV with --json, --csv).
    #[arg(long = "var", value_name = "NAME=VALUE")]
    pub vars: Vec<String>,
    /// Algorithm of collectives that name none: nccl (default: what NCCL's tuner picks for
    /// the size, the members and the topology; docs/VALIDATION-NETWORK.md), binomial, flat
    /// or ring (ring for allreduce, allgather and alltoall; binomial for the rest).
    #[arg(long, default_value = "nccl")]
    pub algorithm: String,
    /// Print the report as one JSON object (the summary level unless --detail asks more).
    #[arg(long, conflicts_with = "csv")]
    pub json: bool,
    /// Print the rows of the --detail level as CSV: one per label (summary), per process or
    /// per compute.
    #[arg(long)]
    pub csv: bool,
    /// How much the JSON or CSV report says: summary (overall figures, per label and per
    /// node; its size does not grow with the processes), processes (and a row per process)
    /// or computes (and a row per compute; the run then records its spans).
    #[arg(long, value_enum, default_value_t)]
    pub detail: DetailLevel,
    /// Write the trace of spans (process, kind, start, end, detail) as JSON.
    #[arg(long, value_name = "FILE.json")]
    pub trace: Option<PathBuf>,
    /// The format of --trace: native (hetsim's spans) or chrome (trace events for Perfetto
    /// and chrome://tracing).
    #[arg(long, value_enum, default_value_t, requires = "trace")]
    pub trace_format: TraceFormat,
    /// Draw a Gantt chart of the processes as SVG.
    #[arg(long, value_name = "FILE.svg")]
    pub timeline: Option<PathBuf>,
    /// Sandbox: wall time a script may run between two sim.* calls [s].
    #[arg(long, default_value_t = 1.0)]
    pub max_slice_seconds: f64,
}

#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// The trace: a .et file, or the prefix of PREFIX.N.et files (plain or gzip).
    pub trace: PathBuf,
    /// The system model: nodes, links, components, computational models.
    #[arg(long, value_name = "FILE.toml")]
    pub system: PathBuf,
    /// How compute nodes are timed: replay (recorded durations), roofline (num_ops and
    /// tensor_size on the rank's catalog GPU), scale:GPU (recorded durations scaled from
    /// the catalog GPU the trace was recorded on to the rank's) or model:FILE.rhai (its
    /// `fn compute_time(node)`; docs/TRACES.md).
    #[arg(long, default_value = "replay", value_name = "POLICY")]
    pub compute: String,
    /// The label whose r-th process runs rank r.
    #[arg(long, default_value = "GPU")]
    pub label: String,
    /// ASTRA-sim's communicator groups: {"pg_name": [ranks]} (collectives name theirs by
    /// pg_name; without a group, a collective spans every rank).
    #[arg(long, value_name = "FILE.json")]
    pub groups: Option<PathBuf>,
    /// A run variable of the system, e.g. `--var boards=4` (repeatable).
    #[arg(long = "var", value_name = "NAME=VALUE")]
    pub vars: Vec<String>,
    /// Follow data dependencies only, as Chakra's feeder does (by default control
    /// dependencies are followed too, except those that close a cycle).
    #[arg(long)]
    pub data_deps_only: bool,
    /// Algorithm of the collectives: nccl (default), binomial, flat or ring.
    #[arg(long, default_value = "nccl")]
    pub algorithm: String,
    /// Print the report as one JSON object, with a `ranks` array.
    #[arg(long)]
    pub json: bool,
    /// How much the JSON report says (as `hetsim run --detail`).
    #[arg(long, value_enum, default_value_t)]
    pub detail: DetailLevel,
    /// Write the trace of spans as JSON (as `hetsim run --trace`).
    #[arg(long = "trace", visible_alias = "trace-out", value_name = "FILE.json")]
    pub trace_out: Option<PathBuf>,
    /// Draw a Gantt chart of the streams as SVG.
    #[arg(long, value_name = "FILE.svg")]
    pub timeline: Option<PathBuf>,
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
    /// Only components of this kind (GPU, CPU, NETWORK, SWITCH).
    #[arg(long)]
    pub kind: Option<String>,
    /// Only the component with this exact name.
    #[arg(long)]
    pub name: Option<String>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// A measurement folder (bench/gpu/run.sh's output) [default: the shipped
    /// examples/validation/data/h100, under the current directory or else the source tree
    /// hetsim was built from].
    #[arg(long, value_name = "DIR")]
    pub data: Option<PathBuf>,
    /// The validation application (variables: phases, computeIntensity, blockSize, numElements,
    /// dynamicSharedMemory, hostMemory) [default: examples/validation/saxpy2/app.rhai, found as
    /// --data's default is].
    #[arg(long, value_name = "FILE")]
    pub app: Option<PathBuf>,
    /// The system model of the measured machine [default:
    /// examples/validation/saxpy2/h100.toml, found as --data's default is].
    #[arg(long, value_name = "FILE")]
    pub system: Option<PathBuf>,
    /// The catalog's GPU (`hetsim components`) in place of the GPU of --system and of every
    /// benchmark set's systems: validates that catalog entry on --data.
    #[arg(long, value_name = "NAME")]
    pub gpu: Option<String>,
    /// Nothing of the system's GPU was fitted on --data's own measurements (a catalog entry
    /// calibrated elsewhere, as the H200's is on the H100): hold power to 20 %, the target for
    /// a GPU never measured. Labels do not change: a row is in-sample when a number it uses
    /// was fitted on launches of its kernels, on any GPU.
    #[arg(long)]
    pub held_out: bool,
    /// Fit TEG's four numbers again without each kernel family they were fitted on (the
    /// benchmark sets with a gpu-teg system), from values fitted on nothing, and score each
    /// family on its own fold: the held-out figures of those families. A TEG fit per family,
    /// minutes each; without it the report says the rows were not run.
    #[arg(long)]
    pub refit_teg: bool,
    /// Write a Markdown report here, with its SVG figures in a `validation/` folder beside it.
    #[arg(long)]
    pub report: Option<PathBuf>,
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
    /// A GPU's catalog entry for the `gpu-queueing` model, from a folder that bench/gpu/run.sh
    /// measured: fits memoryQueueCycles, issueEfficiency, blockLaunchRate and warpSkew to the
    /// saxpy2 timings, the launch overhead to launch.csv and the power levels to power.csv.
    #[command(
        after_help = "Example:\n  hetsim calibrate gpu examples/validation/data/h100 --name \"H100 SXM5 80GB\""
    )]
    Gpu(CalibrateGpuArgs),
}

#[derive(Debug, Args)]
pub struct CalibrateGpuArgs {
    /// The measurement folder (props.csv, sweep.csv, occupancy_block256.csv, launch.csv, power.csv, saxpy2_*.sass).
    pub dir: PathBuf,
    /// The component's name in the printed entry (default: props.csv's `name`).
    #[arg(long)]
    pub name: Option<String>,
    /// Also write the calibrated numbers as a GPU data file (models/data/*.toml: each number
    /// with what it is and from what), which the catalog reads.
    #[arg(long, value_name = "FILE.toml")]
    pub data_file: Option<PathBuf>,
    /// Also write the L2 figure fitted on DIR's kit into this architecture data file
    /// (models/data/hopper.toml), every other line kept.
    #[arg(long, value_name = "FILE.toml")]
    pub architecture_file: Option<PathBuf>,
    /// Also write the latency table's two calibrated figures, branch_taken and
    /// block_replacement, fitted on DIR's occupancy_block256.csv and clock.csv, into this
    /// latency table (kernel/data/latency/hopper.toml), every other line kept. The tables are
    /// built into the binary: rebuild for the new figures to take effect.
    #[arg(long, value_name = "FILE.toml")]
    pub latency_file: Option<PathBuf>,
    /// Also fit on the launches of this benchmark set (a benchset.toml: docs/BENCHMARK-SETS.md,
    /// "Calibrating on a set"), through its gpu-queueing system's kernels; repeatable. A folder
    /// without saxpy2's sweep.csv and occupancy_block256.csv is then calibrated on the sets.
    #[arg(long = "set", value_name = "benchset.toml")]
    pub sets: Vec<PathBuf>,
    /// Also fit TEG's efficiency, queue_cycles, replacement and taken_branch on DIR's saxpy2
    /// launches and the sets' (through their gpu-teg systems), starting from the values of
    /// this TEG data file (teg/data/hopper.toml), and write the fit into it, every other line
    /// kept. TEG runs on the catalog's GPU named by --name (default: props.csv's `name`).
    /// Takes minutes: the engine reruns every launch at each point the search tries.
    #[arg(long, value_name = "FILE.toml")]
    pub teg_file: Option<PathBuf>,
    #[arg(long)]
    pub json: bool,
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

#[derive(Debug, Subcommand)]
pub enum KernelCommand {
    /// SASS in, model parameters out: loops, per-warp instruction counts by pipe, global bytes
    /// per warp and the latency bound (seed 004, section 5.2), statically or by emulating a launch.
    #[command(
        after_help = "Input: `cuobjdump -sass` output (sm_50 … sm_90, several kernels), the thesis's numbered\n\
listing (seed 004, Figure 5.2), or, with nvcc/cuobjdump on PATH, a cubin, an executable or a .cu file.\n\n\
Examples:\n  \
hetsim kernel analyze examples/kernels/saxpy2-figure-5-2.sass                # formulas: 23 + 4·L0, 942 + 24·L0\n  \
hetsim kernel analyze examples/kernels/saxpy2-figure-5-2.sass --trip L0=128\n  \
hetsim kernel analyze examples/kernels/saxpy2-sm90.sass --grid 65536 --block 256 --args 16777216,8,_,_ --json"
    )]
    Analyze(KernelAnalyzeArgs),
    /// Times a launch with TEG (seed 002): the emulated warps' instruction streams replayed
    /// through a cycle-approximate model of one SM's issue engine, scaled to the grid, with the
    /// time each bottleneck costs.
    #[command(after_help = "Examples:\n  \
hetsim kernel simulate examples/kernels/saxpy2-sm90.sass --grid 262144 --block 256 --args 67108864,32,_,_\n  \
hetsim kernel simulate examples/kernels/saxpy2-sm90.sass --grid 262144 --block 256 --args 67108864,32,_,_ --warps-per-sm 8 --json")]
    Simulate(KernelSimulateArgs),
    /// A launch's time on a catalog GPU by the GPU models (docs/MODELS.md): the time, what
    /// limits it, the occupancy, the bandwidth reached, the calibrated error bar and the
    /// model's inputs; --compare puts every model side by side.
    #[command(after_help = "Examples:\n  \
hetsim kernel predict examples/kernels/saxpy2-sm90.sass --grid 262144 --block 256 --args 67108864,32,_,_ --gpu \"H100 SXM5 80GB\"\n  \
hetsim kernel predict examples/kernels/saxpy2-figure-5-2.sass --grid 1562500 --block 256 --args 400000000,128,_,_ \\\n    \
--gpu \"GTX 970 - gajger\" --compare\n\n\
Without --model: gpu-queueing, where the GPU has its calibration (hetsim calibrate gpu); else gpu-teg\n\
where the architecture has a TEG parameter set of its own; else gpu-volkov. The output says which.")]
    Predict(KernelPredictArgs),
}

/// The GPU kernel models `kernel predict` runs (the built-in models of a system file).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum GpuModel {
    #[value(name = "gpu-queueing")]
    Queueing,
    #[value(name = "gpu-teg")]
    Teg,
    #[value(name = "gpu-volkov")]
    Volkov,
    #[value(name = "gpu-hong-kim")]
    HongKim,
}

impl GpuModel {
    pub const ALL: [GpuModel; 4] = [
        GpuModel::Queueing,
        GpuModel::Teg,
        GpuModel::Volkov,
        GpuModel::HongKim,
    ];

    pub fn name(self) -> &'static str {
        match self {
            GpuModel::Queueing => "gpu-queueing",
            GpuModel::Teg => "gpu-teg",
            GpuModel::Volkov => "gpu-volkov",
            GpuModel::HongKim => "gpu-hong-kim",
        }
    }
}

/// A kernel launch on a catalog GPU, as `kernel simulate` and `kernel predict` take it.
#[derive(Debug, Args)]
pub struct LaunchArgs {
    /// A SASS listing, a cubin or executable, or a .cu file.
    pub file: PathBuf,
    /// The kernel: a substring of its mangled or demangled name.
    #[arg(long)]
    pub kernel: Option<String>,
    /// Architecture (sm_52 … sm_90); overrides the listing's. Without it, the listing's, else
    /// the GPU's compute capability; a listing compiled for another GPU is refused, and with
    /// --arch, warned about.
    #[arg(long)]
    pub arch: Option<String>,
    /// The grid, `X[,Y,Z]`.
    #[arg(long, value_name = "X[,Y,Z]")]
    pub grid: String,
    /// The block, `X[,Y,Z]`.
    #[arg(long, value_name = "X[,Y,Z]")]
    pub block: String,
    /// The kernel's arguments in order, `_` for a pointer: `16777216,8,_,_`.
    #[arg(long, value_name = "V,V,…", allow_hyphen_values = true)]
    pub args: Option<String>,
    /// Dynamic shared memory per block [bytes].
    #[arg(long, default_value_t = 0)]
    pub dynamic_shared: u32,
    /// The GPU, by its catalog name (`hetsim components`).
    #[arg(long, default_value = "H100 SXM5 80GB")]
    pub gpu: String,
}

#[derive(Debug, Args)]
pub struct KernelPredictArgs {
    #[command(flatten)]
    pub launch: LaunchArgs,
    /// The model; without it, the recommended one the GPU is calibrated for (see below).
    #[arg(long, value_enum, conflicts_with = "compare")]
    pub model: Option<GpuModel>,
    /// Every model side by side.
    #[arg(long)]
    pub compare: bool,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct KernelSimulateArgs {
    #[command(flatten)]
    pub launch: LaunchArgs,
    /// Resident warps per SM instead of the occupancy calculator's (whole blocks, at least one).
    #[arg(long)]
    pub warps_per_sm: Option<u32>,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct KernelAnalyzeArgs {
    /// A SASS listing, a cubin or executable, or a .cu file.
    pub file: PathBuf,
    /// The kernel: a substring of its mangled or demangled name.
    #[arg(long)]
    pub kernel: Option<String>,
    /// Architecture (sm_52 … sm_90); overrides the listing's (a mismatch with --gpu is a
    /// warning), and picks the target of a .cu file.
    #[arg(long)]
    pub arch: Option<String>,
    /// The GPU, by its catalog name: a listing that names no architecture is analysed for its
    /// compute capability, and one compiled for another is refused.
    #[arg(long)]
    pub gpu: Option<String>,
    /// Static mode: how many times loop LOOP's header runs, e.g. `--trip L0=128` (repeatable).
    #[arg(long = "trip", value_name = "LOOP=N")]
    pub trips: Vec<String>,
    /// Emulation mode: the grid, `X[,Y,Z]`.
    #[arg(long, value_name = "X[,Y,Z]", requires = "block")]
    pub grid: Option<String>,
    /// Emulation mode: the block, `X[,Y,Z]`.
    #[arg(long, value_name = "X[,Y,Z]", requires = "grid")]
    pub block: Option<String>,
    /// Emulation mode: the kernel's arguments in order, `_` for a pointer: `16777216,8,_,_`.
    #[arg(long, value_name = "V,V,…", requires = "grid", allow_hyphen_values = true)]
    pub args: Option<String>,
    /// Emulation mode: dynamic shared memory per block [bytes].
    #[arg(long, default_value_t = 0)]
    pub dynamic_shared: u32,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// `hetsim model --help` names every model `hetsim model` runs.
    #[test]
    fn the_model_help_lists_every_model() {
        let cli = super::Cli::command();
        let model = cli.find_subcommand("model").expect("model command");
        let help = model.get_after_help().map(|h| h.to_string()).unwrap_or_default();
        let list = help.lines().next().unwrap_or_default();
        for m in hetsim_models::ModelName::ALL {
            assert!(
                list.split([' ', ',', '.']).any(|w| w == m.as_str()),
                "`{m}` is missing from: {list}"
            );
        }
    }

    /// Every command and subcommand's `--help` ends with an example (the top level's says so).
    #[test]
    fn every_command_has_an_example_in_its_help() {
        fn check(command: &clap::Command, path: &str, missing: &mut Vec<String>) {
            let path = format!("{path} {}", command.get_name());
            let help = command
                .get_after_help()
                .map(|h| h.to_string())
                .unwrap_or_default();
            if !help.contains("Example") && command.get_name() != "help" {
                missing.push(path.clone());
            }
            for sub in command.get_subcommands() {
                check(sub, &path, missing);
            }
        }
        let mut missing = Vec::new();
        check(&super::Cli::command(), "", &mut missing);
        assert!(missing.is_empty(), "no example in the help of: {missing:?}");
    }
}
