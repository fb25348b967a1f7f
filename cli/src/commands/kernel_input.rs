//! What every `hetsim kernel` command reads alike: the listing (a SASS file, a cubin or a .cu
//! file), the catalog GPU, and the architecture the kernel is taken for.

use std::path::Path;
use std::process::Command;

use anyhow::{anyhow, bail, Context, Result};
use hetsim_kernel::{Arch, ArchChoice, Launch};
use hetsim_lab::files::display_name;
use hetsim_lab::launch::launch_of;

use crate::cli::LaunchArgs;

/// A launch as the command line gives it, read: the kernel selected from its listing, the
/// architecture chosen for it and the GPU ([`Arch::choose`]).
pub(super) struct Launched<'a> {
    /// The listing's file, as messages name it.
    pub origin: &'a str,
    /// The listing's SASS text.
    pub text: &'a str,
    pub kernel: &'a hetsim_kernel::sass::Kernel,
    pub choice: ArchChoice,
    pub launch: Launch,
    pub gpu: hetsim_teg::Gpu,
}

/// Reads `args` and hands what they launch to `then`.
pub(super) fn with_launch<T>(args: &LaunchArgs, then: impl FnOnce(Launched<'_>) -> Result<T>) -> Result<T> {
    let origin = display_name(&args.file);
    let explicit = parse_arch(args.arch.as_deref())?;
    let (gpu, gpu_arch) = catalog_gpu(&args.gpu)?;
    let text = listing_text(&args.file, explicit.or(Some(gpu_arch)))?;
    let listing = hetsim_kernel::parse(&text).map_err(|e| anyhow!("{origin}: {e}"))?;
    let kernel = hetsim_kernel::select_kernel(&listing, args.kernel.as_deref(), explicit.or(Some(gpu_arch)))
        .map_err(|e| anyhow!("{origin}: {e}"))?;
    let choice = choose_arch(explicit, kernel, Some((&args.gpu, gpu_arch)), &origin)?;
    let launch = launch_of(&args.grid, &args.block, args.args.as_deref(), args.dynamic_shared)?;
    then(Launched {
        origin: &origin,
        text: &text,
        kernel,
        choice,
        launch,
        gpu,
    })
}

/// The kernel's demangled name, else its name; the thesis's numbered listing has none.
pub(super) fn display_kernel_name(kernel: &hetsim_kernel::sass::Kernel) -> &str {
    match (kernel.demangled.as_deref(), kernel.name.as_str()) {
        (Some(d), _) => d,
        (None, "") => "(the listing's one kernel)",
        (None, name) => name,
    }
}

/// The catalog's GPU `name` as TEG takes it, and its compute capability.
pub(super) fn catalog_gpu(name: &str) -> Result<(hetsim_teg::Gpu, Arch)> {
    let gpu = hetsim_teg::Gpu::from_catalog(name).map_err(|e| anyhow!("--gpu {name}: {e}"))?;
    let arch = gpu.arch().map_err(|e| anyhow!("--gpu {name}: {e}"))?;
    Ok((gpu, arch))
}

/// The architecture to analyse `kernel` for ([`Arch::choose`]): a mismatch between the
/// listing and the GPU is an error, or with `--arch`, a warning on stderr.
pub(super) fn choose_arch(
    explicit: Option<Arch>,
    kernel: &hetsim_kernel::sass::Kernel,
    gpu: Option<(&str, Arch)>,
    origin: &str,
) -> Result<ArchChoice> {
    let choice = Arch::choose(explicit, kernel.arch, gpu).map_err(|e| anyhow!("{origin}: {e}"))?;
    let choice =
        choice.ok_or_else(|| anyhow!("{origin}: the listing names no architecture: give --arch or --gpu"))?;
    for warning in &choice.warnings {
        eprintln!("warning: {warning}");
    }
    Ok(choice)
}

pub(super) fn parse_arch(text: Option<&str>) -> Result<Option<Arch>> {
    text.map(str::parse::<Arch>)
        .transpose()
        .map_err(|e| anyhow!("--arch: {e}"))
}

/// The SASS text of `path`: a listing as it is; a `.cu` file compiled with `nvcc -cubin`; any
/// other binary (cubin, fatbin, executable) disassembled with `cuobjdump -sass`.
pub(super) fn listing_text(path: &Path, arch: Option<Arch>) -> Result<String> {
    if path == Path::new("-") {
        return hetsim_lab::files::read_text(path);
    }
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    if path.extension().is_some_and(|e| e == "cu") {
        let arch = arch.ok_or_else(|| {
            anyhow!(
                "{}: compiling a .cu file needs nvcc's target: give --arch (sm_52 … sm_90) or --gpu",
                path.display()
            )
        })?;
        let cubin = std::env::temp_dir().join(format!("hetsim-{}.cubin", std::process::id()));
        let mut nvcc = Command::new("nvcc");
        nvcc.args(["-cubin", "-O3", &format!("-arch={arch}"), "-o"])
            .arg(&cubin)
            .arg(path);
        tool_output(nvcc, "nvcc", "nvidia-cuda-nvcc")?;
        let text = cuobjdump(&cubin);
        let _ = std::fs::remove_file(&cubin);
        return text;
    }
    match String::from_utf8(bytes) {
        Ok(text) if !text.starts_with("\u{7f}ELF") => Ok(text),
        _ => cuobjdump(path),
    }
}

fn cuobjdump(path: &Path) -> Result<String> {
    let mut command = Command::new("cuobjdump");
    command.arg("-sass").arg(path);
    tool_output(command, "cuobjdump", "nvidia-cuda-cuobjdump")
}

/// Runs a CUDA tool; its absence is a clear error saying where to get it.
fn tool_output(mut command: Command, tool: &str, package: &str) -> Result<String> {
    let output = command.output().map_err(|e| {
        anyhow!("{tool}: {e}: a binary or .cu input needs {tool} on PATH (pip install {package}); a SASS listing needs nothing")
    })?;
    if !output.status.success() {
        bail!(
            "{tool} failed: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    String::from_utf8(output.stdout).map_err(|_| anyhow!("{tool} printed something that is not UTF-8"))
}
