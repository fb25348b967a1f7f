//! Components and their attributes; computational models, system models and application
//! models (named texts).

use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;

use super::{ApiError, ApiResult, AppState, Body, Path};
use hetsim_scripting::system::ComponentSpec;

use crate::storage::{Attribute, ComponentRecord, Library, Named};

pub async fn list_components(State(s): State<AppState>) -> ApiResult<Json<Vec<ComponentRecord>>> {
    Ok(Json(s.store.components(None, None).await?))
}

pub async fn show_component(
    State(s): State<AppState>,
    Path(id): Path<String>,
) -> ApiResult<Json<ComponentRecord>> {
    s.store
        .components(Some(&id), None)
        .await?
        .pop()
        .map(Json)
        .ok_or_else(|| ApiError::not_found("component", &id))
}

pub async fn create_component(
    State(s): State<AppState>,
    Body(spec): Body<ComponentSpec>,
) -> ApiResult<(StatusCode, Json<ComponentRecord>)> {
    if spec.name.trim().is_empty() {
        return Err(ApiError::invalid("name", "a component needs a name"));
    }
    spec.to_component().map_err(|e| ApiError::invalid("kind", e))?;
    if !s.store.components(None, Some(&spec.name)).await?.is_empty() {
        return Err(ApiError::Conflict {
            field: Some("name"),
            message: format!("a component named {:?} exists", spec.name),
        });
    }
    let id = s.store.insert_component(&spec).await?;
    Ok((StatusCode::CREATED, Json(ComponentRecord { id, spec })))
}

pub async fn update_component(
    State(s): State<AppState>,
    Path(id): Path<String>,
    Body(spec): Body<ComponentSpec>,
) -> ApiResult<Json<ComponentRecord>> {
    spec.to_component().map_err(|e| ApiError::invalid("kind", e))?;
    if s.store.update_component(&id, &spec).await? {
        Ok(Json(ComponentRecord { id, spec }))
    } else {
        Err(ApiError::not_found("component", &id))
    }
}

pub async fn delete_component(State(s): State<AppState>, Path(id): Path<String>) -> ApiResult<StatusCode> {
    if s.store.delete_component(&id).await? {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::not_found("component", &id))
    }
}

pub async fn put_attribute(
    State(s): State<AppState>,
    Path((id, key)): Path<(String, String)>,
    Body(value): Body<Attribute>,
) -> ApiResult<StatusCode> {
    if s.store.set_attribute(&id, &key, &value).await? {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::not_found("component", &id))
    }
}

async fn list(s: &AppState, library: Library) -> ApiResult<Json<Vec<Named>>> {
    Ok(Json(s.store.named(library, None, None).await?))
}

async fn show(s: &AppState, library: Library, what: &'static str, id: &str) -> ApiResult<Json<Named>> {
    s.store
        .named(library, Some(id), None)
        .await?
        .pop()
        .map(Json)
        .ok_or_else(|| ApiError::not_found(what, id))
}

/// Checks a named text before it is stored: Rhai sources compile, systems parse.
fn check(library: Library, item: &Named) -> ApiResult<()> {
    library
        .check(item)
        .map_err(|(field, message)| ApiError::invalid(field, message))
}

async fn create(s: &AppState, library: Library, item: Named) -> ApiResult<(StatusCode, Json<Named>)> {
    check(library, &item)?;
    if !s.store.named(library, None, Some(&item.name)).await?.is_empty() {
        return Err(ApiError::Conflict {
            field: Some("name"),
            message: format!("{:?} exists", item.name),
        });
    }
    let id = s.store.insert_named(library, &item).await?;
    Ok((StatusCode::CREATED, Json(Named { id, ..item })))
}

async fn update(
    s: &AppState,
    library: Library,
    what: &'static str,
    id: &str,
    item: Named,
) -> ApiResult<Json<Named>> {
    check(library, &item)?;
    if s.store.update_named(library, id, &item).await? {
        Ok(Json(Named {
            id: id.to_owned(),
            ..item
        }))
    } else {
        Err(ApiError::not_found(what, id))
    }
}

async fn delete(s: &AppState, library: Library, what: &'static str, id: &str) -> ApiResult<StatusCode> {
    if s.store.delete_named(library, id).await? {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::not_found(what, id))
    }
}

/// The five handlers of one library of named texts.
macro_rules! named_handlers {
    ($library:expr, $what:literal, $list:ident, $show:ident, $create:ident, $update:ident, $delete:ident) => {
        pub async fn $list(State(s): State<AppState>) -> ApiResult<Json<Vec<Named>>> {
            list(&s, $library).await
        }
        pub async fn $show(State(s): State<AppState>, Path(id): Path<String>) -> ApiResult<Json<Named>> {
            show(&s, $library, $what, &id).await
        }
        pub async fn $create(
            State(s): State<AppState>,
            Body(item): Body<Named>,
        ) -> ApiResult<(StatusCode, Json<Named>)> {
            create(&s, $library, item).await
        }
        pub async fn $update(
            State(s): State<AppState>,
            Path(id): Path<String>,
            Body(item): Body<Named>,
        ) -> ApiResult<Json<Named>> {
            update(&s, $library, $what, &id, item).await
        }
        pub async fn $delete(State(s): State<AppState>, Path(id): Path<String>) -> ApiResult<StatusCode> {
            delete(&s, $library, $what, &id).await
        }
    };
}

named_handlers!(
    Library::Models,
    "model",
    list_models,
    show_model,
    create_model,
    update_model,
    delete_model
);
named_handlers!(
    Library::Systems,
    "system",
    list_systems,
    show_system,
    create_system,
    update_system,
    delete_system
);
named_handlers!(
    Library::Apps,
    "app",
    list_apps,
    show_app,
    create_app,
    update_app,
    delete_app
);
