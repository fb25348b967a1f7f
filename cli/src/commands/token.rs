//! `hetsim token create | list | revoke`: a server's named API tokens, managed in its
//! database directly, as an administrator on the server's host does (no server needs to
//! run, and no token is needed to make the first one).

use anyhow::{Context, Result};

use crate::cli::{TokenCommand, TokenCreateArgs, TokenListArgs, TokenRevokeArgs};
use hetsim_service::redact_url;
use hetsim_service::storage::{Store, TokenRecord};
use hetsim_web::access::TOKENS_TTL;

pub async fn run(command: TokenCommand) -> Result<()> {
    match command {
        TokenCommand::Create(args) => create(args).await,
        TokenCommand::List(args) => list(args).await,
        TokenCommand::Revoke(args) => revoke(args).await,
    }
}

async fn connect(db: &str) -> Result<Store> {
    Store::connect(db)
        .await
        .with_context(|| format!("opening the database {}", redact_url(db)))
}

/// Prints the token alone on standard output (`TOKEN=$(hetsim token create …)`), and what
/// to do with it on standard error.
async fn create(args: TokenCreateArgs) -> Result<()> {
    let store = connect(&args.db.db).await?;
    let new = store.create_token(&args.name, args.role.into()).await?;
    eprintln!(
        "A {} token for {:?}. It is shown this once and cannot be shown again (the database keeps \
         only its hash): give it to its holder, who passes it as --token or HETSIM_TOKEN, as \
         `Authorization: Bearer`, or in the web UI's login. A running server accepts it within {} s.",
        new.record.role,
        new.record.name,
        TOKENS_TTL.as_secs()
    );
    println!("{}", new.token);
    Ok(())
}

async fn list(args: TokenListArgs) -> Result<()> {
    let tokens = connect(&args.db.db).await?.tokens().await?;
    if args.json {
        return super::print_json(&tokens);
    }
    if tokens.is_empty() {
        println!("no tokens: the server needs none unless it has an admin token (HETSIM_TOKEN)");
        return Ok(());
    }
    print!("{}", table(&tokens));
    Ok(())
}

/// Name, role, created and revoked, in aligned columns.
fn table(tokens: &[TokenRecord]) -> String {
    let mut rows = vec![["name", "role", "created", "revoked"].map(str::to_owned)];
    rows.extend(tokens.iter().map(|t| {
        [
            t.name.clone(),
            t.role.to_string(),
            t.created_at.clone(),
            t.revoked_at.clone().unwrap_or_else(|| "-".to_owned()),
        ]
    }));
    let width = |c: usize| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0);
    let widths = [width(0), width(1), width(2)];
    rows.iter()
        .map(|r| {
            format!(
                "{:<w0$}  {:<w1$}  {:<w2$}  {}\n",
                r[0],
                r[1],
                r[2],
                r[3],
                w0 = widths[0],
                w1 = widths[1],
                w2 = widths[2]
            )
        })
        .collect()
}

async fn revoke(args: TokenRevokeArgs) -> Result<()> {
    let revoked = connect(&args.db.db).await?.revoke_token(&args.name).await?;
    println!(
        "revoked the {} token of {:?}; a running server refuses it within {} s",
        revoked.role,
        revoked.name,
        TOKENS_TTL.as_secs()
    );
    Ok(())
}
