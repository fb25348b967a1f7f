//! Who a request comes from and what they may do: the one table of the role each route's
//! changes need ([`needed`]), and the tokens a server accepts ([`Access`]): its admin token
//! (`HETSIM_TOKEN`, `serve --token`) and the named tokens of the database, read again every
//! [`TOKENS_TTL`] so that `hetsim token create` and `revoke` reach a running server.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use axum::http::Method;
use hetsim_service::storage::{parse_token, same_token, ActiveToken, Store, StoreError, ADMIN_NAME};

pub use hetsim_service::storage::Role;

/// How long the server keeps the named tokens it read: a token made or revoked takes effect
/// within this time, and a busy server reads the table at most once in it.
pub const TOKENS_TTL: Duration = Duration::from_secs(2);

/// Paths anyone may use, with or without a token: the API's liveness, its description and
/// the system files' schema (the same on every hetsim server, and read by browsers and
/// editors, which send no bearer header), the UI's login and logout, its assets.
pub fn is_public(path: &str) -> bool {
    PUBLIC_PATHS.contains(&path) || path == "/login" || path == "/logout" || path.starts_with("/ui/")
}

/// The API's routes that need no token.
pub const PUBLIC_PATHS: [&str; 4] = [
    "/api/health",
    "/api/openapi.json",
    "/api/docs",
    "/api/schemas/system.json",
];

/// The routes whose changes (any method but GET and HEAD) need the `submit` role: queueing,
/// cancelling and deleting runs and sweeps, in the API and in the UI. `*` is one segment of
/// the path (an id). Every other change (the catalog, the shipped examples, and anything not
/// listed here) needs `admin`, so that a route added later is closed until it is listed.
const SUBMIT_ROUTES: [&str; 11] = [
    "/api/runs",
    "/api/runs/*",
    "/api/runs/*/cancel",
    "/api/sweeps",
    "/api/sweeps/*",
    "/api/sweeps/*/cancel",
    "/launch",
    "/runs/*/cancel",
    "/runs/*/delete",
    "/sweeps/*/cancel",
    "/sweeps/*/delete",
];

/// The role a request of `method` on `path` needs (`None`: anyone may make it): `read` for
/// GET and HEAD, `submit` for the changes of [`SUBMIT_ROUTES`], `admin` for every other
/// change. The API's 403s, the UI's refusals, the buttons the UI offers and the OpenAPI
/// document's 403 responses all come from here.
pub fn needed(method: &Method, path: &str) -> Option<Role> {
    if is_public(path) {
        None
    } else if method == Method::GET || method == Method::HEAD {
        Some(Role::Read)
    } else if SUBMIT_ROUTES.iter().any(|route| matches(route, path)) {
        Some(Role::Submit)
    } else {
        Some(Role::Admin)
    }
}

/// Whether `path` is `route`, a `*` of the route standing for one non-empty segment.
fn matches(route: &str, path: &str) -> bool {
    let (mut route, mut path) = (route.split('/'), path.split('/'));
    loop {
        match (route.next(), path.next()) {
            (None, None) => return true,
            (Some("*"), Some(segment)) if !segment.is_empty() => {}
            (Some(a), Some(b)) if a == b => {}
            _ => return false,
        }
    }
}

/// A token's holder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Caller {
    pub name: String,
    pub role: Role,
}

/// Who a request comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Identity {
    /// The server needs no token: it has no admin token and no unrevoked named token, so
    /// anyone may do anything (a first server, set up by nobody).
    Open,
    /// The server needs a token and the request presents none that it accepts.
    Anonymous,
    Signed(Caller),
}

impl Identity {
    /// Whether this identity may make a request that needs `role` (`None`: anyone may).
    pub fn may(&self, role: Option<Role>) -> bool {
        match (self, role) {
            (_, None) | (Identity::Open, _) => true,
            (Identity::Anonymous, Some(_)) => false,
            (Identity::Signed(caller), Some(role)) => caller.role >= role,
        }
    }

    /// The name a run submitted by this identity records (none on an open server).
    pub fn submitter(&self) -> Option<&str> {
        match self {
            Identity::Signed(caller) => Some(&caller.name),
            Identity::Open | Identity::Anonymous => None,
        }
    }
}

/// The named tokens as last read, by id.
struct Snapshot {
    read_at: Instant,
    tokens: Arc<HashMap<String, ActiveToken>>,
}

/// The tokens a server accepts.
pub struct Access {
    /// The admin token, acting as the user [`ADMIN_NAME`] with the admin role.
    admin: Option<String>,
    cache: RwLock<Option<Snapshot>>,
    /// Held while the table is read, so that requests arriving together read it once.
    reading: tokio::sync::Mutex<()>,
}

impl Access {
    pub fn new(admin: Option<String>) -> Self {
        Access {
            admin,
            cache: RwLock::new(None),
            reading: tokio::sync::Mutex::new(()),
        }
    }

    /// Who presents the first of `presented` (the bearer header's token, the login
    /// cookie's) that the server accepts. The admin token is checked first, so that it
    /// works while the database does not answer.
    pub async fn identify(&self, store: &Store, presented: &[&str]) -> Result<Identity, StoreError> {
        if let Some(admin) = &self.admin {
            if presented.iter().any(|p| same_token(p, admin)) {
                return Ok(Identity::Signed(Caller {
                    name: ADMIN_NAME.to_owned(),
                    role: Role::Admin,
                }));
            }
        }
        let tokens = self.tokens(store).await?;
        if self.admin.is_none() && tokens.is_empty() {
            return Ok(Identity::Open);
        }
        let found = presented.iter().find_map(|text| {
            let (id, secret) = parse_token(text)?;
            let token = tokens.get(id)?;
            token.accepts(secret).then(|| Caller {
                name: token.name.clone(),
                role: token.role,
            })
        });
        Ok(found.map_or(Identity::Anonymous, Identity::Signed))
    }

    fn fresh(&self) -> Option<Arc<HashMap<String, ActiveToken>>> {
        let cache = self.cache.read().unwrap_or_else(|poisoned| poisoned.into_inner());
        cache
            .as_ref()
            .filter(|s| s.read_at.elapsed() < TOKENS_TTL)
            .map(|s| s.tokens.clone())
    }

    /// The unrevoked named tokens, read again once [`TOKENS_TTL`] has passed.
    async fn tokens(&self, store: &Store) -> Result<Arc<HashMap<String, ActiveToken>>, StoreError> {
        if let Some(tokens) = self.fresh() {
            return Ok(tokens);
        }
        let _reading = self.reading.lock().await;
        if let Some(tokens) = self.fresh() {
            return Ok(tokens);
        }
        let tokens: HashMap<_, _> = store
            .active_tokens()
            .await?
            .into_iter()
            .map(|t| (t.id.clone(), t))
            .collect();
        let tokens = Arc::new(tokens);
        let mut cache = self
            .cache
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        *cache = Some(Snapshot {
            read_at: Instant::now(),
            tokens: tokens.clone(),
        });
        Ok(tokens)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_gives_each_request_its_role() {
        let (get, post, put, delete) = (Method::GET, Method::POST, Method::PUT, Method::DELETE);
        let read = Some(Role::Read);
        let submit = Some(Role::Submit);
        let admin = Some(Role::Admin);
        let cases = [
            (&get, "/api/health", None),
            (&get, "/api/docs", None),
            (&post, "/login", None),
            (&post, "/logout", None),
            (&get, "/ui/app.css", None),
            (&get, "/", read),
            (&get, "/api/runs", read),
            (&Method::HEAD, "/api/runs/r1/log", read),
            (&get, "/components/GTX%20970", read),
            (&post, "/api/runs", submit),
            (&post, "/api/sweeps", submit),
            (&post, "/api/runs/r1/cancel", submit),
            (&post, "/api/sweeps/s1/cancel", submit),
            (&delete, "/api/runs/r1", submit),
            (&delete, "/api/sweeps/s1", submit),
            (&post, "/launch", submit),
            (&post, "/runs/r1/cancel", submit),
            (&post, "/runs/r1/delete", submit),
            (&post, "/sweeps/s1/delete", submit),
            (&post, "/api/components", admin),
            (&put, "/api/components/c1/attributes/bandwidth", admin),
            (&delete, "/api/apps/saxpy2", admin),
            (&put, "/api/systems/gtx970", admin),
            (&post, "/api/models", admin),
            (&put, "/api/traces/dp-step", admin),
            (&delete, "/api/traces/dp-step", admin),
            (&get, "/api/traces/dp-step/files", read),
            (&post, "/components", admin),
            (&post, "/apps/saxpy2", admin),
            (&post, "/examples", admin),
            (&post, "/api/runs//cancel", admin),
            (&post, "/api/runs/r1/cancel/more", admin),
            (&Method::PATCH, "/api/nothing", admin),
        ];
        for (method, path, role) in cases {
            assert_eq!(needed(method, path), role, "{method} {path}");
        }
    }

    #[test]
    fn each_role_includes_the_ones_below_it() {
        let signed = |role| {
            Identity::Signed(Caller {
                name: "ana".into(),
                role,
            })
        };
        assert!(signed(Role::Read).may(Some(Role::Read)));
        assert!(!signed(Role::Read).may(Some(Role::Submit)));
        assert!(signed(Role::Submit).may(Some(Role::Submit)));
        assert!(!signed(Role::Submit).may(Some(Role::Admin)));
        assert!(signed(Role::Admin).may(Some(Role::Admin)));
        assert!(Identity::Open.may(Some(Role::Admin)));
        assert!(!Identity::Anonymous.may(Some(Role::Read)));
        assert!(Identity::Anonymous.may(None));
        assert_eq!(signed(Role::Read).submitter(), Some("ana"));
        assert_eq!(Identity::Open.submitter(), None);
    }
}
