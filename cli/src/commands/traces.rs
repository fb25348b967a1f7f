//! `hetsim traces put|list|get|delete`: Chakra execution traces stored on a server.

use anyhow::{anyhow, Context, Result};
use hetsim_chakra::rank_files;
use hetsim_service::storage::{TraceFile, TraceRecord, TraceUpload};

use super::client::Client;
use crate::cli::{TracesCommand, TracesDeleteArgs, TracesGetArgs, TracesListArgs, TracesPutArgs};

pub async fn run(command: TracesCommand) -> Result<()> {
    match command {
        TracesCommand::Put(args) => put(args).await,
        TracesCommand::List(args) => list(args).await,
        TracesCommand::Get(args) => get(args).await,
        TracesCommand::Delete(args) => delete(args).await,
    }
}

/// The route of trace `name`.
fn route(name: &str) -> String {
    format!("/api/traces/{}", hetsim_web::url::encode(name))
}

/// One line of a listing: id, name, ranks and nodes.
fn line(t: &TraceRecord) -> String {
    format!("{}  {}  {} ranks, {} nodes", t.id, t.name, t.ranks, t.nodes)
}

/// Reads the rank files of `args.trace` (a file, or a prefix's PREFIX.N.et files) and
/// stores them; the server reads them whole and answers with its reader's error otherwise.
async fn put(args: TracesPutArgs) -> Result<()> {
    let files = rank_files(&args.trace)?
        .into_iter()
        .map(|path| {
            let data = std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            Ok(TraceFile { name, data })
        })
        .collect::<Result<Vec<_>>>()?;
    let client = Client::new(&args.target.server, args.target.token);
    let stored = client
        .put(&route(&args.name), &serde_json::to_value(TraceUpload { files })?)
        .await?;
    let stored: TraceRecord = serde_json::from_value(stored).context("the server's answer")?;
    println!("{}", line(&stored));
    Ok(())
}

async fn list(args: TracesListArgs) -> Result<()> {
    let client = Client::new(&args.target.server, args.target.token);
    let items = client
        .get("/api/traces")
        .await?
        .ok_or_else(|| anyhow!("/api/traces: not found on {}", client.server))?;
    if args.json {
        return super::print_json(&items);
    }
    let traces: Vec<TraceRecord> = serde_json::from_value(items).context("the server's answer")?;
    for t in &traces {
        println!("{}", line(t));
    }
    Ok(())
}

fn missing(client: &Client, name: &str) -> anyhow::Error {
    anyhow!(
        "no trace with id or name {name:?} on {} (`hetsim traces list` lists them)",
        client.server
    )
}

/// Prints the trace's ranks and node counts, or writes its rank files to `--output-dir`.
async fn get(args: TracesGetArgs) -> Result<()> {
    let client = Client::new(&args.target.server, args.target.token);
    let Some(dir) = &args.output_dir else {
        let item = client
            .get(&route(&args.name))
            .await?
            .ok_or_else(|| missing(&client, &args.name))?;
        let t: TraceRecord = serde_json::from_value(item).context("the server's answer")?;
        println!("{}", line(&t));
        for f in &t.files {
            println!(
                "  rank {}  {}  {} nodes, {} bytes",
                f.rank, f.name, f.nodes, f.bytes
            );
        }
        return Ok(());
    };
    let files = client
        .get(&format!("{}/files", route(&args.name)))
        .await?
        .ok_or_else(|| missing(&client, &args.name))?;
    let files: Vec<TraceFile> = serde_json::from_value(files).context("the server's answer")?;
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    for file in files {
        // As a worker names it: a server's answer never writes outside `dir`.
        let path = dir.join(hetsim_service::storage::file_name(&file.name));
        std::fs::write(&path, &file.data).with_context(|| format!("writing {}", path.display()))?;
        println!("{}", path.display());
    }
    Ok(())
}

async fn delete(args: TracesDeleteArgs) -> Result<()> {
    let client = Client::new(&args.target.server, args.target.token.clone());
    let url = format!("{}{}", client.server, route(&args.name));
    client
        .send(client.http.delete(url))
        .await?
        .ok_or_else(|| missing(&client, &args.name))?;
    println!("trace {} deleted", args.name);
    Ok(())
}
