//! Components with their attributes, and named Rhai sources (computational models,
//! application models) and system models.

use std::collections::{BTreeMap, HashMap};

use super::Result;
use hetsim_models::catalog;
use hetsim_models::Scalar;
use hetsim_scripting::ScriptError;
use hetsim_system::ComponentSpec;
use serde::{Deserialize, Serialize};
use sqlx::Row;

use super::Store;

/// A component as the API shows it: its id beside the fields a system file's
/// `[[component]]` table has.
#[derive(Clone, Debug, Serialize, PartialEq)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ComponentRecord {
    pub id: String,
    #[serde(flatten)]
    pub spec: ComponentSpec,
}

/// One attribute value, as `PUT /api/components/{id}/attributes/{key}` takes it.
pub type Attribute = Scalar;

/// A named text: a computational model's or an application's source, a system definition.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Named {
    /// Given by the server: ignored in a request body.
    #[serde(default)]
    pub id: String,
    pub name: String,
    /// The Rhai source, or the system's TOML text or JSON.
    pub body: String,
}

/// Why a named text cannot be stored.
#[derive(Debug, thiserror::Error)]
pub enum Refused {
    #[error("a name is needed")]
    NoName,
    /// The text does not compile (Rhai) or parse (a system).
    #[error(transparent)]
    Body(ScriptError),
}

impl Refused {
    /// The field at fault: `name` or `body`.
    pub fn field(&self) -> &'static str {
        match self {
            Refused::NoName => "name",
            Refused::Body(_) => "body",
        }
    }

    /// The 1-based line of the body the problem is at, where the compiler or parser says.
    pub fn line(&self) -> Option<usize> {
        match self {
            Refused::NoName => None,
            Refused::Body(e) => e.line(),
        }
    }
}

/// The three tables of named texts; the column holding the text.
#[derive(Clone, Copy, Debug)]
pub enum Library {
    Models,
    Systems,
    Apps,
}

impl Library {
    fn table(self) -> &'static str {
        match self {
            Library::Models => "models",
            Library::Systems => "systems",
            Library::Apps => "apps",
        }
    }

    /// Whether `item` may be stored: it has a name, and its text compiles (Rhai) or parses
    /// (a system); the error says the field at fault and, in the text, the line.
    pub fn check(self, item: &Named) -> std::result::Result<(), Refused> {
        if item.name.trim().is_empty() {
            return Err(Refused::NoName);
        }
        match self {
            Library::Apps | Library::Models => hetsim_scripting::check_app(&item.body, &item.name),
            Library::Systems => hetsim_system::SystemFile::parse(&item.body, &item.name)
                .and_then(|file| readable_by_a_server(&file, &item.name))
                .map_err(ScriptError::from),
        }
        .map_err(Refused::Body)
    }

    fn column(self) -> &'static str {
        match self {
            Library::Models | Library::Apps => "source",
            Library::Systems => "definition",
        }
    }
}

/// A stored system runs on whichever worker takes it, which has no file of the client's: a
/// kernel whose listing is a file (`sass`), not inline (`listing`), could never run, so it is
/// refused when stored rather than at every launch.
fn readable_by_a_server(
    file: &hetsim_system::SystemFile,
    origin: &str,
) -> std::result::Result<(), hetsim_system::SystemError> {
    match file.kernels.iter().find(|k| k.sass.is_some()) {
        None => Ok(()),
        Some(kernel) => Err(hetsim_system::SystemError::new(format!(
            "kernel `{}`: `sass` names a file ({}), which the server cannot read: give the listing's text as \
             `listing` (`hetsim submit` and `hetsim catalog put systems` inline it from a file)",
            kernel.name,
            kernel.sass.as_deref().unwrap_or_default()
        ))
        .in_file(origin)),
    }
}

impl Store {
    pub(super) async fn seed_catalog(&self) -> Result<()> {
        let count: i64 = sqlx::query("SELECT COUNT(*) AS n FROM components")
            .fetch_one(self.pool())
            .await?
            .try_get("n")?;
        if count == 0 {
            for c in catalog::components() {
                match self.insert_component(&ComponentSpec::from_component(c)).await {
                    // A server and its workers started together on one empty database all
                    // seed it: the first to insert a component wins, the others go on.
                    Err(e) if e.is_unique_violation() => {}
                    inserted => drop(inserted?),
                }
            }
        }
        Ok(())
    }

    /// Inserts a component and its attributes; returns its id.
    pub async fn insert_component(&self, c: &ComponentSpec) -> Result<String> {
        c.to_component()?;
        let id = uuid::Uuid::new_v4().to_string();
        let mut tx = self.pool().begin().await?;
        sqlx::query("INSERT INTO components (id, name, vendor, kind, comment, source) VALUES ($1, $2, $3, $4, $5, $6)")
            .bind(&id)
            .bind(&c.name)
            .bind(&c.vendor)
            .bind(c.kind.to_uppercase())
            .bind(&c.comment)
            .bind(&c.source)
            .execute(&mut *tx)
            .await?;
        for (key, value) in &c.attributes {
            put_attribute(&mut tx, &id, key, value).await?;
        }
        tx.commit().await?;
        Ok(id)
    }

    pub async fn set_attribute(&self, component: &str, key: &str, value: &Attribute) -> Result<bool> {
        let exists = sqlx::query("SELECT id FROM components WHERE id = $1")
            .bind(component)
            .fetch_optional(self.pool())
            .await?
            .is_some();
        if exists {
            // Writes only inside the transaction: it takes the write lock at its first statement.
            let mut tx = self.pool().begin().await?;
            sqlx::query("DELETE FROM attributes WHERE component_id = $1 AND key = $2")
                .bind(component)
                .bind(key)
                .execute(&mut *tx)
                .await?;
            put_attribute(&mut tx, component, key, value).await?;
            tx.commit().await?;
        }
        Ok(exists)
    }

    /// Replaces a component's fields and attributes; false when there is no such component.
    pub async fn update_component(&self, id: &str, c: &ComponentSpec) -> Result<bool> {
        c.to_component()?;
        let mut tx = self.pool().begin().await?;
        let updated = sqlx::query(
            "UPDATE components SET name = $1, vendor = $2, kind = $3, comment = $4, source = $5 WHERE id = $6",
        )
        .bind(&c.name)
        .bind(&c.vendor)
        .bind(c.kind.to_uppercase())
        .bind(&c.comment)
        .bind(&c.source)
        .bind(id)
        .execute(&mut *tx)
        .await?
        .rows_affected()
            > 0;
        if updated {
            sqlx::query("DELETE FROM attributes WHERE component_id = $1")
                .bind(id)
                .execute(&mut *tx)
                .await?;
            for (key, value) in &c.attributes {
                put_attribute(&mut tx, id, key, value).await?;
            }
        }
        tx.commit().await?;
        Ok(updated)
    }

    pub async fn delete_component(&self, id: &str) -> Result<bool> {
        let mut tx = self.pool().begin().await?;
        sqlx::query("DELETE FROM attributes WHERE component_id = $1")
            .bind(id)
            .execute(&mut *tx)
            .await?;
        let done = sqlx::query("DELETE FROM components WHERE id = $1")
            .bind(id)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(done.rows_affected() > 0)
    }

    /// All components, or the one with `id` or `name`, with their attributes.
    pub async fn components(&self, id: Option<&str>, name: Option<&str>) -> Result<Vec<ComponentRecord>> {
        let rows = sqlx::query(
            "SELECT id, name, vendor, kind, comment, source FROM components \
             WHERE ($1 = '' OR id = $1) AND ($2 = '' OR name = $2) ORDER BY name",
        )
        .bind(id.unwrap_or(""))
        .bind(name.unwrap_or(""))
        .fetch_all(self.pool())
        .await?;
        // The same filter selects the attributes, in one query for all the components.
        let mut attributes: HashMap<String, BTreeMap<String, Scalar>> = HashMap::new();
        let attribute_rows = sqlx::query(
            "SELECT a.component_id, a.key, a.number, a.text FROM attributes a \
             JOIN components c ON c.id = a.component_id \
             WHERE ($1 = '' OR c.id = $1) AND ($2 = '' OR c.name = $2)",
        )
        .bind(id.unwrap_or(""))
        .bind(name.unwrap_or(""))
        .fetch_all(self.pool())
        .await?;
        for a in attribute_rows {
            let number: Option<f64> = a.try_get("number")?;
            let text: Option<String> = a.try_get("text")?;
            let value = match (number, text) {
                (Some(x), _) => Scalar::Number(x),
                (None, t) => Scalar::Text(t.unwrap_or_default()),
            };
            attributes
                .entry(a.try_get("component_id")?)
                .or_default()
                .insert(a.try_get("key")?, value);
        }
        let mut out = Vec::with_capacity(rows.len());
        for row in rows {
            let id: String = row.try_get("id")?;
            out.push(ComponentRecord {
                spec: ComponentSpec {
                    name: row.try_get("name")?,
                    vendor: row.try_get("vendor")?,
                    kind: row.try_get("kind")?,
                    comment: row.try_get("comment")?,
                    source: row.try_get("source")?,
                    attributes: attributes.remove(&id).unwrap_or_default(),
                },
                id,
            });
        }
        Ok(out)
    }

    pub async fn insert_named(&self, library: Library, item: &Named) -> Result<String> {
        let id = uuid::Uuid::new_v4().to_string();
        let sql = format!(
            "INSERT INTO {} (id, name, {}) VALUES ($1, $2, $3)",
            library.table(),
            library.column()
        );
        sqlx::query(&sql)
            .bind(&id)
            .bind(&item.name)
            .bind(&item.body)
            .execute(self.pool())
            .await?;
        Ok(id)
    }

    /// All items, or the one with `id` or `name`.
    pub async fn named(&self, library: Library, id: Option<&str>, name: Option<&str>) -> Result<Vec<Named>> {
        let sql = format!(
            "SELECT id, name, {} AS body FROM {} WHERE ($1 = '' OR id = $1) AND ($2 = '' OR name = $2) ORDER BY name",
            library.column(),
            library.table()
        );
        sqlx::query(&sql)
            .bind(id.unwrap_or(""))
            .bind(name.unwrap_or(""))
            .fetch_all(self.pool())
            .await?
            .into_iter()
            .map(|r| {
                Ok(Named {
                    id: r.try_get("id")?,
                    name: r.try_get("name")?,
                    body: r.try_get("body")?,
                })
            })
            .collect()
    }

    pub async fn update_named(&self, library: Library, id: &str, item: &Named) -> Result<bool> {
        let sql = format!(
            "UPDATE {} SET name = $1, {} = $2 WHERE id = $3",
            library.table(),
            library.column()
        );
        let done = sqlx::query(&sql)
            .bind(&item.name)
            .bind(&item.body)
            .bind(id)
            .execute(self.pool())
            .await?;
        Ok(done.rows_affected() > 0)
    }

    /// The id of the component whose id is `key`, else of the one named `key`.
    pub async fn component_id(&self, key: &str) -> Result<Option<String>> {
        self.id_by_id_or_name("components", key).await
    }

    /// The id of the item of `library` whose id is `key`, else of the one named `key`.
    pub async fn named_id(&self, library: Library, key: &str) -> Result<Option<String>> {
        self.id_by_id_or_name(library.table(), key).await
    }

    /// Ids win over names: an item named like another item's id never hides that item, and
    /// an id keeps addressing its item whatever it is renamed to. (Names are unique per
    /// table, so a name matches at most one item.)
    pub(super) async fn id_by_id_or_name(&self, table: &str, key: &str) -> Result<Option<String>> {
        for column in ["id", "name"] {
            let sql = format!("SELECT id FROM {table} WHERE {column} = $1");
            if let Some(row) = sqlx::query(&sql).bind(key).fetch_optional(self.pool()).await? {
                return Ok(Some(row.try_get("id")?));
            }
        }
        Ok(None)
    }

    pub async fn delete_named(&self, library: Library, id: &str) -> Result<bool> {
        let sql = format!("DELETE FROM {} WHERE id = $1", library.table());
        Ok(sqlx::query(&sql)
            .bind(id)
            .execute(self.pool())
            .await?
            .rows_affected()
            > 0)
    }
}

async fn put_attribute(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    component: &str,
    key: &str,
    value: &Scalar,
) -> Result<()> {
    let (number, text) = match value {
        Scalar::Number(x) => (Some(*x), None),
        Scalar::Text(s) => (None, Some(s.clone())),
    };
    sqlx::query("INSERT INTO attributes (component_id, key, number, text) VALUES ($1, $2, $3, $4)")
        .bind(component)
        .bind(key)
        .bind(number)
        .bind(text)
        .execute(&mut **tx)
        .await?;
    Ok(())
}
