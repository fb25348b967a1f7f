//! Reading user files: whole texts (or standard input) and CSV measurements, with errors that
//! name the file, the line and the field.

use std::io::Read;
use std::path::Path;

use anyhow::{anyhow, Context, Result};

/// The whole of `path`, or of standard input for `-`.
pub fn read_text(path: &Path) -> Result<String> {
    if path == Path::new("-") {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .context("reading standard input")?;
        Ok(text)
    } else {
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))
    }
}

/// Writes `contents` to `path`, making its folder first (`--timeline out/run.svg` works in a
/// fresh checkout): a command writes where it is told, and only there.
pub fn write_file(path: &Path, contents: impl AsRef<[u8]>) -> Result<()> {
    if let Some(folder) = path.parent().filter(|f| !f.as_os_str().is_empty()) {
        std::fs::create_dir_all(folder).with_context(|| format!("making {}", folder.display()))?;
    }
    std::fs::write(path, contents).with_context(|| format!("writing {}", path.display()))
}

pub fn display_name(path: &Path) -> String {
    if path == Path::new("-") {
        "<stdin>".to_owned()
    } else {
        path.display().to_string()
    }
}

/// The rows of a CSV file with a header, each as the named columns' text.
pub fn csv_rows(path: &Path, columns: &[&str]) -> Result<Vec<(u64, Vec<String>)>> {
    let origin = display_name(path);
    // Line numbers count `\n`s: CRLF line ends (the kit's CSVs have them) keep them right.
    let text = read_text(path)?.replace("\r\n", "\n");
    let mut reader = csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .from_reader(text.as_bytes());
    let headers = reader
        .headers()
        .with_context(|| format!("{origin}: reading the header"))?
        .clone();
    let positions = columns
        .iter()
        .map(|c| {
            headers
                .iter()
                .position(|h| h.eq_ignore_ascii_case(c))
                .ok_or_else(|| {
                    anyhow!(
                        "{origin}: line 1: no column `{c}` (expected columns: {})",
                        columns.join(",")
                    )
                })
        })
        .collect::<Result<Vec<_>>>()?;
    reader
        .records()
        .map(|record| {
            let record = record.with_context(|| format!("{origin}: malformed CSV"))?;
            let line = record.position().map_or(0, |p| p.line());
            let fields = positions
                .iter()
                .map(|&i| record.get(i).unwrap_or("").to_owned())
                .collect();
            Ok((line, fields))
        })
        .collect()
}

/// A CSV field as a number, or an error naming the file, line and column.
pub fn number_field(origin: &str, line: u64, column: &str, text: &str) -> Result<f64> {
    text.parse::<f64>()
        .ok()
        .filter(|x| x.is_finite())
        .ok_or_else(|| anyhow!("{origin}: line {line}: field `{column}`: expected a number, got {text:?}"))
}
