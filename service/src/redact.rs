//! Secrets kept out of logs and error messages.

/// `scheme://user:password@host…` with the password replaced by `***`; other text as is.
pub fn redact_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    match authority.rsplit_once('@') {
        Some((userinfo, host)) => {
            let user = userinfo.split_once(':').map_or(userinfo, |(user, _)| user);
            let hidden = if userinfo.contains(':') { ":***" } else { "" };
            format!("{scheme}://{user}{hidden}@{host}{tail}")
        }
        None => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::redact_url;

    #[test]
    fn passwords_are_hidden_and_the_rest_kept() {
        assert_eq!(
            redact_url("postgres://bob:s3cret@db:5432/test?sslmode=disable"),
            "postgres://bob:***@db:5432/test?sslmode=disable"
        );
        assert_eq!(
            redact_url("amqp://guest:p@ss@127.0.0.1:5672/%2f"),
            "amqp://guest:***@127.0.0.1:5672/%2f"
        );
        assert_eq!(redact_url("amqp://127.0.0.1:5672"), "amqp://127.0.0.1:5672");
        assert_eq!(redact_url("hetsim.db"), "hetsim.db");
        assert_eq!(redact_url("postgres://bob@db/x"), "postgres://bob@db/x");
    }
}
