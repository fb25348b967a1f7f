//! A kernel launch from text, as the command line's `--grid`, `--block` and `--args` flags
//! and the measurement files' columns give it.

use anyhow::{anyhow, bail, Result};
use hetsim_kernel::{Arg, Launch};

/// A launch from the command line's `--grid`, `--block`, `--args` and `--dynamic-shared`.
pub fn launch_of(grid: &str, block: &str, values: Option<&str>, dynamic_shared: u32) -> Result<Launch> {
    let values = values.unwrap_or("");
    let args_list = values
        .split(',')
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(|v| match v {
            "_" => Ok(Arg::Pointer),
            _ => v
                .parse::<i64>()
                .map(Arg::Int)
                .or_else(|_| v.parse::<f64>().map(Arg::Float))
                .map_err(|_| anyhow!("--args: `{v}` is neither a number nor `_` (a pointer)")),
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Launch {
        grid: dims(grid, "--grid")?,
        block: dims(block, "--block")?,
        args: args_list,
        dynamic_shared,
    })
}

/// `X[,Y,Z]`, each at least 1.
fn dims(text: &str, flag: &str) -> Result<[u32; 3]> {
    let parts: Vec<&str> = text.split(',').map(str::trim).collect();
    if parts.is_empty() || parts.len() > 3 {
        bail!("{flag} {text}: expected X, X,Y or X,Y,Z");
    }
    let mut out = [1u32; 3];
    for (slot, part) in out.iter_mut().zip(&parts) {
        *slot = part
            .parse::<u32>()
            .ok()
            .filter(|&v| v >= 1)
            .ok_or_else(|| anyhow!("{flag} {text}: `{part}` is not a whole number ≥ 1"))?;
    }
    Ok(out)
}
