//! `hetsim submit`, `hetsim sweep`, `hetsim results` and `hetsim catalog`: clients of a
//! server's HTTP API.

use std::io::Write;
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};
use hetsim_service::table::{number, scalar};
use indicatif::ProgressBar;
use serde_json::Value;

use crate::cli::{
    CatalogCommand, CatalogGetArgs, CatalogKind, CatalogListArgs, CatalogPutArgs, ResultsArgs, SubmitArgs,
    TargetArgs,
};
use crate::input::pair;
use hetsim_lab::files::{read_text, write_file};
use hetsim_scripting::report::{write_process_row, write_processes_header};
use hetsim_service::storage::ProcessResult;
use hetsim_service::submit::{label_count, variable_value, RunStatus};

pub(super) struct Client {
    pub(super) http: reqwest::Client,
    pub(super) server: String,
    token: Option<String>,
}

impl Client {
    pub(super) fn new(server: &str, token: Option<String>) -> Self {
        Client {
            http: reqwest::Client::new(),
            server: server.trim_end_matches('/').to_owned(),
            token,
        }
    }

    pub(super) async fn send(&self, request: reqwest::RequestBuilder) -> Result<Option<Value>> {
        let request = match &self.token {
            Some(t) => request.bearer_auth(t),
            None => request,
        };
        let response = request
            .send()
            .await
            .with_context(|| format!("reaching {}", self.server))?;
        let status = response.status();
        if status == reqwest::StatusCode::NOT_FOUND {
            return Ok(None);
        }
        let body: Value = response.json().await.unwrap_or(Value::Null);
        if !status.is_success() {
            let field = body["field"]
                .as_str()
                .map(|f| format!(" (field `{f}`)"))
                .unwrap_or_default();
            bail!(
                "{status}: {}{field}",
                body["error"].as_str().unwrap_or("no message")
            );
        }
        Ok(Some(body))
    }

    pub(super) async fn get(&self, path: &str) -> Result<Option<Value>> {
        self.send(self.http.get(format!("{}{path}", self.server))).await
    }

    /// GET `path` with `query` parameters, encoded.
    async fn get_with(&self, path: &str, query: &[(&str, String)]) -> Result<Option<Value>> {
        self.send(self.http.get(format!("{}{path}", self.server)).query(query))
            .await
    }

    async fn post(&self, path: &str, body: &Value) -> Result<Value> {
        self.send(self.http.post(format!("{}{path}", self.server)).json(body))
            .await?
            .ok_or_else(|| anyhow!("{path}: not found on {}", self.server))
    }

    pub(super) async fn put(&self, path: &str, body: &Value) -> Result<Value> {
        self.send(self.http.put(format!("{}{path}", self.server)).json(body))
            .await?
            .ok_or_else(|| anyhow!("{path}: not found on {}", self.server))
    }

    /// `method` on `/api/runs/ID{suffix}`, or on `/api/sweeps/ID{suffix}` when there is no
    /// such run: the body answered and whether the id was a sweep's.
    async fn on_run_or_sweep(
        &self,
        method: reqwest::Method,
        id: &str,
        suffix: &str,
    ) -> Result<(Value, bool)> {
        for (collection, sweep) in [("runs", false), ("sweeps", true)] {
            let url = format!("{}/api/{collection}/{id}{suffix}", self.server);
            if let Some(body) = self.send(self.http.request(method.clone(), url)).await? {
                return Ok((body, sweep));
            }
        }
        bail!("no run or sweep with id {id} on {}", self.server)
    }
}

/// `NAME=V` (or, in a sweep, `NAME=V1,V2,…`) flags as a JSON object.
fn values(flags: &[String], flag: &str, sweep: bool, read: impl Fn(&str) -> Result<Value>) -> Result<Value> {
    let mut out = serde_json::Map::new();
    for text in flags {
        let (name, value) = pair(text, flag)?;
        let value = if sweep {
            hetsim_service::submit::comma_list(value, &read)?
        } else {
            read(value)?
        };
        out.insert(name.to_owned(), value);
    }
    Ok(Value::Object(out))
}

/// The system file as the server takes it, with the files it names (`.rhai` computational
/// models, kernels' SASS listings) inlined as `hetsim run` would read them: a server reads
/// no file. TOML stays TOML text, its comments kept; JSON becomes the inlined object.
fn system_for_server(path: &std::path::Path) -> Result<Value> {
    let text = read_text(path)?;
    let origin = path.display().to_string();
    let base_dir = path.parent().unwrap_or(std::path::Path::new("."));
    if !text.trim_start().starts_with('{') {
        let read = |file: &str| std::fs::read_to_string(base_dir.join(file));
        let toml = hetsim_system::self_contained_toml(&text, &origin, read).map_err(|e| anyhow!(e))?;
        return Ok(Value::String(toml));
    }
    let file = hetsim_system::SystemFile::parse(&text, &origin).map_err(|e| anyhow!(e))?;
    let inlined = file
        .clone()
        .inline_kernel_listings(base_dir)
        .and_then(|f| f.inline_model_files(base_dir))
        .map_err(|e| anyhow!("{origin}: {e}"))?;
    if inlined != file {
        return Ok(serde_json::to_value(inlined)?);
    }
    serde_json::from_str(&text).with_context(|| format!("{origin}: malformed JSON"))
}

/// `"KEY": local file's content` or `"KEY_name": stored item's name`, whichever was given.
fn app_and_system(args: &SubmitArgs) -> Result<serde_json::Map<String, Value>> {
    let mut out = serde_json::Map::new();
    match (&args.app, &args.app_name, &args.trace_name) {
        (Some(path), _, _) => out.insert("app".into(), read_text(path)?.into()),
        (None, Some(name), _) => out.insert("app_name".into(), name.as_str().into()),
        (None, None, Some(name)) => out.insert("trace_name".into(), name.as_str().into()),
        (None, None, None) => bail!("--app FILE, --app-name NAME or --trace-name NAME is required"),
    };
    match (&args.system, &args.system_name) {
        (Some(path), _) => out.insert("system".into(), system_for_server(path)?),
        (None, Some(name)) => out.insert("system_name".into(), name.as_str().into()),
        (None, None) => bail!("--system FILE or --system-name NAME is required"),
    };
    Ok(out)
}

fn submission(args: &SubmitArgs, sweep: bool) -> Result<Value> {
    let labels = values(&args.labels, "--label", sweep, |v| {
        label_count(v).ok_or_else(|| anyhow!("--label: {v:?} is not a whole number"))
    })?;
    let variables = values(&args.vars, "--var", sweep, |v| Ok(variable_value(v)))?;
    let mut body = app_and_system(args)?;
    body.insert("queue".into(), args.queue.as_str().into());
    body.insert("labels".into(), labels);
    body.insert("variables".into(), variables);
    body.insert("trace".into(), args.trace.into());
    if let Some(compute) = &args.compute {
        // A sweep's `--compute a,b` sweeps the policies, as `--var` does a variable's values.
        let policies = if sweep {
            hetsim_service::submit::comma_list(compute, |p| Ok::<_, anyhow::Error>(p.into()))?
        } else {
            compute.as_str().into()
        };
        body.insert("compute".into(), policies);
    }
    Ok(Value::Object(body))
}

/// A bar of `len` steps of `what`, hidden where stderr is not a terminal.
fn bar(len: u64, what: &str) -> ProgressBar {
    crate::progress::bar(len, &format!("{{pos}}/{{len}} {what} {{msg}}")).unwrap_or_else(ProgressBar::hidden)
}

/// How long `--wait` watches a submission no worker takes before saying so (it waits on).
const UNTAKEN_WARNING: Duration = Duration::from_secs(30);

/// Says once, on stderr, that nothing of `what` has been taken from `queue` after
/// [`UNTAKEN_WARNING`]: a queue nobody consumes otherwise looks like a hang.
struct Untaken<'a> {
    since: std::time::Instant,
    warned: bool,
    what: String,
    queue: &'a str,
}

impl<'a> Untaken<'a> {
    fn new(what: String, queue: &'a str) -> Self {
        Untaken {
            since: std::time::Instant::now(),
            warned: false,
            what,
            queue,
        }
    }

    fn check(&mut self, untaken: bool, progress: &ProgressBar) {
        if untaken && !self.warned && self.since.elapsed() >= UNTAKEN_WARNING {
            self.warned = true;
            progress.suspend(|| {
                eprintln!(
                    "{} is still queued after {} s: no worker has taken it. Is one consuming \
                     queue `{}` (`hetsim worker --queue {}`, or `hetsim serve --workers N`)? \
                     Still waiting; Ctrl-C stops waiting, not the {}.",
                    self.what,
                    UNTAKEN_WARNING.as_secs(),
                    self.queue,
                    self.queue,
                    if self.what.starts_with("sweep") {
                        "sweep"
                    } else {
                        "run"
                    },
                )
            });
        }
    }
}

async fn wait_run(client: &Client, id: &str, queue: &str) -> Result<Value> {
    let spinner = bar(1, "run");
    let mut untaken = Untaken::new(format!("run {id}"), queue);
    loop {
        let run = client
            .get(&format!("/api/runs/{id}"))
            .await?
            .ok_or_else(|| anyhow!("run {id} vanished"))?;
        let status = run["status"].as_str().unwrap_or("").to_owned();
        spinner.set_message(status.clone());
        untaken.check(status == "queued", &spinner);
        if RunStatus::parse(&status).is_some_and(RunStatus::is_final) {
            spinner.finish_and_clear();
            return Ok(run);
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

async fn wait_sweep(client: &Client, id: &str, queue: &str) -> Result<Value> {
    let mut progress: Option<ProgressBar> = None;
    let mut untaken = Untaken::new(format!("sweep {id}"), queue);
    loop {
        let sweep = client
            .get(&format!("/api/sweeps/{id}"))
            .await?
            .ok_or_else(|| anyhow!("sweep {id} vanished"))?;
        let total = sweep["total"].as_u64().unwrap_or(0);
        let finished: u64 = RunStatus::ALL
            .into_iter()
            .filter(|s| s.is_final())
            .map(|s| sweep[s.as_str()].as_u64().unwrap_or(0))
            .sum();
        let p = progress.get_or_insert_with(|| bar(total, "runs"));
        p.set_position(finished);
        p.set_message(format!("({} failed)", sweep["failed"]));
        untaken.check(sweep["queued"].as_u64() == Some(total), p);
        if finished == total {
            p.finish_and_clear();
            return Ok(sweep);
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

fn print_run(run: &Value) {
    match run["status"].as_str() {
        Some("done") => println!(
            "run {} done: overall time {} ms, total energy {} J, failure chance {}",
            run["id"].as_str().unwrap_or(""),
            number(run["result"]["overall_time"].as_f64().unwrap_or(f64::NAN) * 1e3),
            scalar(&run["result"]["total_energy"]),
            scalar(&run["result"]["failure_chance"])
        ),
        _ => println!(
            "run {} {}: {}",
            run["id"].as_str().unwrap_or(""),
            run["status"].as_str().unwrap_or("?"),
            run["error"].as_str().unwrap_or("")
        ),
    }
}

pub async fn submit(args: SubmitArgs, sweep: bool) -> Result<()> {
    let client = Client::new(&args.server, args.token.clone());
    let body = submission(&args, sweep)?;
    let path = if sweep { "/api/sweeps" } else { "/api/runs" };
    let accepted = client.post(path, &body).await?;
    let id = accepted["id"]
        .as_str()
        .ok_or_else(|| anyhow!("the server answered no id"))?
        .to_owned();
    if !args.wait {
        if args.json {
            println!("{accepted}");
        } else {
            println!(
                "{} {id} queued on {}",
                if sweep { "sweep" } else { "run" },
                args.queue
            );
        }
        return Ok(());
    }
    if sweep {
        let summary = wait_sweep(&client, &id, &args.queue).await?;
        if args.json {
            println!("{}", serde_json::to_string_pretty(&summary)?);
        } else {
            println!(
                "sweep {id}: {} runs, {} done, {} failed, {} cancelled",
                summary["total"], summary["done"], summary["failed"], summary["cancelled"]
            );
        }
        if summary["done"] != summary["total"] {
            bail!(
                "sweep {id}: {} of {} runs did not finish done ({} failed, {} cancelled)",
                summary["total"]
                    .as_u64()
                    .unwrap_or(0)
                    .saturating_sub(summary["done"].as_u64().unwrap_or(0)),
                summary["total"],
                summary["failed"],
                summary["cancelled"]
            );
        }
    } else {
        let run = wait_run(&client, &id, &args.queue).await?;
        if args.json {
            println!("{}", serde_json::to_string_pretty(&run)?);
        } else {
            print_run(&run);
        }
        if run["status"] != "done" {
            bail!(
                "run {id} {}: {}",
                run["status"].as_str().unwrap_or("?"),
                run["error"].as_str().unwrap_or("")
            );
        }
    }
    Ok(())
}

pub async fn results(args: ResultsArgs) -> Result<()> {
    let client = Client::new(&args.server, args.token.clone());
    if args.processes {
        return processes(&client, &args).await;
    }
    let runs: Vec<Value> = match client.get(&format!("/api/runs/{}", args.id)).await? {
        Some(run) => vec![run],
        None => {
            client
                .get(&format!("/api/sweeps/{}", args.id))
                .await?
                .ok_or_else(|| anyhow!("no run or sweep with id {}", args.id))?;
            let list = client
                .get(&format!("/api/runs?sweep={}&limit=100000", args.id))
                .await?;
            list.and_then(|l| l.as_array().cloned()).unwrap_or_default()
        }
    };
    if !args.csv {
        if runs.len() == 1 {
            println!("{}", serde_json::to_string_pretty(&runs[0])?);
        } else {
            print!("{}", hetsim_service::table::runs_table(&runs));
        }
        return Ok(());
    }
    print!("{}", hetsim_service::table::runs_csv(&runs));
    Ok(())
}

/// A run's processes, a page of [`PAGE`] at a time, each page written before the next is
/// asked for: as JSON lines, or as CSV.
async fn processes(client: &Client, args: &ResultsArgs) -> Result<()> {
    const PAGE: i64 = 10_000;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let path = format!("/api/runs/{}/processes", args.id);
    let mut offset = 0;
    loop {
        let mut query = vec![("offset", offset.to_string()), ("limit", PAGE.to_string())];
        query.extend(args.label.iter().map(|l| ("label", l.clone())));
        let page = client
            .get_with(&path, &query)
            .await?
            .ok_or_else(|| anyhow!("no run with id {}", args.id))?;
        let rows: Vec<ProcessResult> = serde_json::from_value(page["processes"].clone())
            .with_context(|| format!("{path}: expected a page of processes"))?;
        if args.csv {
            if offset == 0 {
                write_processes_header(&mut out)?;
            }
            for row in &rows {
                write_process_row(row, &mut out)?;
            }
        } else {
            for row in &rows {
                serde_json::to_writer(&mut out, row)?;
                out.write_all(b"\n")?;
            }
        }
        offset += PAGE;
        if rows.len() < PAGE as usize || offset >= page["total"].as_i64().unwrap_or(0) {
            break;
        }
    }
    out.flush()?;
    Ok(())
}

pub async fn cancel(args: TargetArgs) -> Result<()> {
    let client = Client::new(&args.server, args.token);
    match client
        .on_run_or_sweep(reqwest::Method::POST, &args.id, "/cancel")
        .await?
    {
        (answer, true) => println!("sweep {}: {} runs cancelled", args.id, answer["cancelled"]),
        (_, false) => println!("run {} cancelled", args.id),
    }
    Ok(())
}

pub async fn delete(args: TargetArgs) -> Result<()> {
    let client = Client::new(&args.server, args.token);
    let (_, sweep) = client
        .on_run_or_sweep(reqwest::Method::DELETE, &args.id, "")
        .await?;
    println!("{} {} deleted", if sweep { "sweep" } else { "run" }, args.id);
    Ok(())
}

pub async fn catalog(command: CatalogCommand) -> Result<()> {
    match command {
        CatalogCommand::List(args) => catalog_list(args).await,
        CatalogCommand::Get(args) => catalog_get(args).await,
        CatalogCommand::Put(args) => catalog_put(args).await,
    }
}

/// The item `args` stores: `{name, body}` with the file's text (a system's with the files it
/// names inlined, as `hetsim submit` sends it: a server reads no file), or a component's
/// JSON.
fn catalog_item(args: &CatalogPutArgs) -> Result<Value> {
    let text = read_text(&args.file)?;
    match args.kind {
        CatalogKind::Systems => {
            let body = match system_for_server(&args.file)? {
                Value::String(text) => text,
                inlined => serde_json::to_string_pretty(&inlined)?,
            };
            Ok(serde_json::json!({ "name": args.name, "body": body }))
        }
        CatalogKind::Components => {
            let mut component: Value = serde_json::from_str(&text)
                .with_context(|| format!("{}: expected a component as JSON", args.file.display()))?;
            let object = component
                .as_object_mut()
                .ok_or_else(|| anyhow!("{}: expected a JSON object", args.file.display()))?;
            object.insert("name".to_owned(), Value::from(args.name.clone()));
            Ok(component)
        }
        _ => Ok(serde_json::json!({ "name": args.name, "body": text })),
    }
}

/// Creates the item, or replaces the one of that name.
async fn catalog_put(args: CatalogPutArgs) -> Result<()> {
    let client = Client::new(&args.target.server, args.target.token.clone());
    let route = args.kind.route();
    let item = catalog_item(&args)?;
    let existing = format!("/api/{route}/{}", hetsim_web::url::encode(&args.name));
    let stored = if client.get(&existing).await?.is_some() {
        client.put(&existing, &item).await?
    } else {
        client.post(&format!("/api/{route}"), &item).await?
    };
    println!("{}  {}", stored["id"].as_str().unwrap_or(""), args.name);
    Ok(())
}

async fn catalog_list(args: CatalogListArgs) -> Result<()> {
    let client = Client::new(&args.target.server, args.target.token);
    let route = args.kind.route();
    let items = client
        .get(&format!("/api/{route}"))
        .await?
        .ok_or_else(|| anyhow!("/api/{route}: not found on {}", client.server))?;
    if args.json {
        return super::print_json(&items);
    }
    for item in items.as_array().into_iter().flatten() {
        let kind = item["kind"]
            .as_str()
            .map(|k| format!(" [{k}]"))
            .unwrap_or_default();
        println!(
            "{}  {}{kind}",
            item["id"].as_str().unwrap_or(""),
            item["name"].as_str().unwrap_or("")
        );
    }
    Ok(())
}

async fn catalog_get(args: CatalogGetArgs) -> Result<()> {
    let client = Client::new(&args.target.server, args.target.token);
    let route = args.kind.route();
    let item = client
        .get(&format!(
            "/api/{route}/{}",
            hetsim_web::url::encode(&args.id_or_name)
        ))
        .await?
        .ok_or_else(|| {
            anyhow!(
                "no {route} item with id or name {:?} on {} (`hetsim catalog list {route}` lists them)",
                args.id_or_name,
                client.server
            )
        })?;
    let text = match args.kind {
        CatalogKind::Components => format!("{}\n", serde_json::to_string_pretty(&item)?),
        _ => item["body"]
            .as_str()
            .ok_or_else(|| anyhow!("the server answered no body for {:?}", args.id_or_name))?
            .to_owned(),
    };
    match &args.output {
        Some(path) => write_file(path, text),
        None => {
            print!("{text}");
            Ok(())
        }
    }
}
