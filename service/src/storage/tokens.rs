//! Named API tokens: who may use a server, and with which role. A token is shown once, when
//! it is made (`hst_<id>_<secret>`); the database keeps only the SHA-256 of its secret, so a
//! copy of the database lets no one in. The secret is 32 random bytes, far beyond guessing,
//! so a plain hash is enough: a slow password hash (argon2, bcrypt) protects low-entropy
//! secrets that a person chose, and would only slow every request here.

use std::fmt;

use serde::Serialize;
use sha2::{Digest, Sha256};
use sqlx::any::AnyRow;
use sqlx::Row;
use subtle::ConstantTimeEq;

use super::{now, Result, Store, StoreError};

/// What every token starts with: a scanner of leaked secrets (or a person) can tell a
/// hetsim token from other text.
pub const TOKEN_PREFIX: &str = "hst_";

/// The name the admin token (`HETSIM_TOKEN`, `serve --token`) acts under; no named token
/// may take it, so that a run's submitter names one holder.
pub const ADMIN_NAME: &str = "admin";

/// Random bytes of a token's id and of its secret.
const ID_BYTES: usize = 6;
const SECRET_BYTES: usize = 32;

/// The longest token name.
pub const MAX_NAME_CHARS: usize = 64;

/// What a token may do, each role including the ones below it: `read` reads everything,
/// `submit` also submits, cancels and deletes runs and sweeps, `admin` also edits the
/// catalog.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum Role {
    Read,
    Submit,
    Admin,
}

impl Role {
    pub const ALL: [Role; 3] = [Role::Read, Role::Submit, Role::Admin];

    pub fn as_str(self) -> &'static str {
        match self {
            Role::Read => "read",
            Role::Submit => "submit",
            Role::Admin => "admin",
        }
    }

    pub fn parse(text: &str) -> Option<Role> {
        Role::ALL.into_iter().find(|r| r.as_str() == text)
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A token as `hetsim token list` shows it: never its secret nor its hash.
#[derive(Clone, Debug, Serialize)]
pub struct TokenRecord {
    pub id: String,
    pub name: String,
    pub role: Role,
    pub created_at: String,
    pub revoked_at: Option<String>,
}

/// A token just made: its record and the token itself, which nothing can show again.
#[derive(Clone, Debug)]
pub struct NewToken {
    pub record: TokenRecord,
    pub token: String,
}

/// An unrevoked token as the server checks it: its holder, role and the hash of its secret.
#[derive(Clone)]
pub struct ActiveToken {
    pub id: String,
    pub name: String,
    pub role: Role,
    /// The SHA-256 of the secret, as lowercase hex.
    hash: String,
}

/// The hash is as good as a password to whoever reads a log: never printed.
impl fmt::Debug for ActiveToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ActiveToken")
            .field("id", &self.id)
            .field("name", &self.name)
            .field("role", &self.role)
            .finish_non_exhaustive()
    }
}

impl ActiveToken {
    /// Whether `secret` is this token's, compared in constant time: how long the answer
    /// takes says nothing of how much of a guess was right.
    pub fn accepts(&self, secret: &str) -> bool {
        let presented = hex(&Sha256::digest(secret.as_bytes()));
        presented.as_bytes().ct_eq(self.hash.as_bytes()).into()
    }
}

/// Why a token cannot be made or revoked.
#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    #[error("token name {0:?}: {1}")]
    Name(String, &'static str),
    #[error(
        "an unrevoked token named {0:?} exists (`hetsim token revoke {0}` first, or choose another name)"
    )]
    Taken(String),
    #[error("no unrevoked token named {0:?} (`hetsim token list` shows the tokens)")]
    Unknown(String),
    #[error("the system's random source failed: {0}")]
    Random(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Whether `presented` is `expected`, compared in constant time. Both are hashed first, so
/// that neither the length nor any prefix of the expected token shows in the time taken.
pub fn same_token(presented: &str, expected: &str) -> bool {
    Sha256::digest(presented.as_bytes())
        .ct_eq(&Sha256::digest(expected.as_bytes()))
        .into()
}

/// `hst_<id>_<secret>` → `(id, secret)`, or `None` for text of another shape.
pub fn parse_token(text: &str) -> Option<(&str, &str)> {
    let (id, secret) = text.strip_prefix(TOKEN_PREFIX)?.split_once('_')?;
    let hex_digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_hexdigit());
    (hex_digits(id) && hex_digits(secret)).then_some((id, secret))
}

/// A token name is shown in every run its holder submits and in the pages' header: letters,
/// digits, spaces and `.-_@`, 1 to [`MAX_NAME_CHARS`] characters, not [`ADMIN_NAME`].
pub fn check_name(name: &str) -> std::result::Result<(), TokenError> {
    let refuse = |why| Err(TokenError::Name(name.to_owned(), why));
    if name.trim().is_empty() {
        return refuse("a name is needed");
    }
    if name.trim() != name {
        return refuse("no spaces before or after");
    }
    if name.chars().count() > MAX_NAME_CHARS {
        return refuse("at most 64 characters");
    }
    if !name.chars().all(|c| c.is_alphanumeric() || " .-_@".contains(c)) {
        return refuse("letters, digits, spaces and . - _ @ only");
    }
    if name.eq_ignore_ascii_case(ADMIN_NAME) {
        return refuse("reserved for the server's admin token (HETSIM_TOKEN)");
    }
    Ok(())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn random_hex(n: usize) -> std::result::Result<String, TokenError> {
    let mut bytes = vec![0u8; n];
    getrandom::fill(&mut bytes).map_err(|e| TokenError::Random(e.to_string()))?;
    Ok(hex(&bytes))
}

fn role(row: &AnyRow) -> Result<Role> {
    let text: String = row.try_get("role")?;
    Role::parse(&text)
        .ok_or_else(|| StoreError::Corrupt(format!("unknown token role {text:?} in the database")))
}

fn record(row: &AnyRow) -> Result<TokenRecord> {
    Ok(TokenRecord {
        id: row.try_get("id")?,
        name: row.try_get("name")?,
        role: role(row)?,
        created_at: row.try_get("created_at")?,
        revoked_at: row.try_get("revoked_at")?,
    })
}

impl Store {
    /// Makes a token for `name` with `role`; the answer holds the token, which is stored
    /// only as its hash. A name is unique among unrevoked tokens, so that a holder's token
    /// can be revoked and made anew under the same name (their runs keep naming them).
    pub async fn create_token(&self, name: &str, role: Role) -> std::result::Result<NewToken, TokenError> {
        check_name(name)?;
        let id = random_hex(ID_BYTES)?;
        let secret = random_hex(SECRET_BYTES)?;
        let record = TokenRecord {
            id,
            name: name.to_owned(),
            role,
            created_at: now(),
            revoked_at: None,
        };
        let inserted =
            sqlx::query("INSERT INTO tokens (id, name, role, hash, created_at) VALUES ($1, $2, $3, $4, $5)")
                .bind(&record.id)
                .bind(&record.name)
                .bind(role.as_str())
                .bind(hex(&Sha256::digest(secret.as_bytes())))
                .bind(&record.created_at)
                .execute(self.pool())
                .await
                .map_err(StoreError::from);
        match inserted {
            Err(e) if e.is_unique_violation() => Err(TokenError::Taken(name.to_owned())),
            Err(e) => Err(e.into()),
            Ok(_) => Ok(NewToken {
                token: format!("{TOKEN_PREFIX}{}_{secret}", record.id),
                record,
            }),
        }
    }

    /// Every token, revoked ones too, the oldest first.
    pub async fn tokens(&self) -> Result<Vec<TokenRecord>> {
        sqlx::query("SELECT id, name, role, created_at, revoked_at FROM tokens ORDER BY created_at, id")
            .fetch_all(self.pool())
            .await?
            .iter()
            .map(record)
            .collect()
    }

    /// Revokes the unrevoked token named `name`.
    pub async fn revoke_token(&self, name: &str) -> std::result::Result<TokenRecord, TokenError> {
        let row = sqlx::query(
            "UPDATE tokens SET revoked_at = $1 WHERE name = $2 AND revoked_at IS NULL \
             RETURNING id, name, role, created_at, revoked_at",
        )
        .bind(now())
        .bind(name)
        .fetch_optional(self.pool())
        .await
        .map_err(StoreError::from)?;
        match row {
            Some(row) => Ok(record(&row)?),
            None => Err(TokenError::Unknown(name.to_owned())),
        }
    }

    /// The unrevoked tokens, with their hashes, for the server to check requests against.
    pub async fn active_tokens(&self) -> Result<Vec<ActiveToken>> {
        sqlx::query("SELECT id, name, role, hash FROM tokens WHERE revoked_at IS NULL")
            .fetch_all(self.pool())
            .await?
            .iter()
            .map(|row| {
                Ok(ActiveToken {
                    id: row.try_get("id")?,
                    name: row.try_get("name")?,
                    role: role(row)?,
                    hash: row.try_get("hash")?,
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_reads_back_as_its_id_and_secret_and_nothing_else_does() {
        assert_eq!(parse_token("hst_0a1b2c_ff00"), Some(("0a1b2c", "ff00")));
        for bad in [
            "",
            "hst_",
            "hst__ff",
            "hst_0a_",
            "hst_0a",
            "xyz_0a_ff",
            "hst_0a_f f",
            "hst_zz_ff",
            "s3cret",
        ] {
            assert_eq!(parse_token(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn a_secret_is_accepted_only_whole() {
        let secret = "00ff".repeat(16);
        let token = ActiveToken {
            id: "0a".into(),
            name: "ana".into(),
            role: Role::Read,
            hash: hex(&Sha256::digest(secret.as_bytes())),
        };
        assert!(token.accepts(&secret));
        assert!(!token.accepts(&secret[1..]));
        assert!(!token.accepts(""));
        assert!(!token.accepts(&format!("{secret}0")));
        assert!(
            !format!("{token:?}").contains(&token.hash),
            "the hash stays out of logs"
        );
        assert!(same_token("s3cret", "s3cret"));
        assert!(!same_token("s3cre", "s3cret"));
        assert!(!same_token("", "s3cret"));
    }

    #[test]
    fn names_and_roles() {
        assert!(check_name("ana").is_ok());
        assert!(check_name("Ana María.lab-2@site").is_ok());
        for bad in [
            "",
            " ana",
            "ana ",
            "admin",
            "Admin",
            "a\tb",
            "a/b",
            &"x".repeat(65),
        ] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
        assert!(Role::Read < Role::Submit && Role::Submit < Role::Admin);
        for role in Role::ALL {
            assert_eq!(Role::parse(role.as_str()), Some(role));
        }
        assert_eq!(Role::parse("root"), None);
    }
}
