//! The frame every page shares: head, navigation, main.

use maud::{html, Markup, DOCTYPE};

const SECTIONS: [(&str, &str); 8] = [
    ("/", "Overview"),
    ("/components", "Components"),
    ("/models", "Models"),
    ("/systems", "Systems"),
    ("/apps", "Apps"),
    ("/launch", "Launch"),
    ("/occupancy", "Occupancy"),
    ("/api/docs", "API"),
];

/// A whole page titled `title` around `content`.
pub fn page(title: &str, content: Markup) -> Markup {
    page_with(title, content, None)
}

/// A page that reloads itself every `refresh_seconds` (a run still in progress).
pub fn page_with(title: &str, content: Markup, refresh_seconds: Option<u32>) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                @if let Some(seconds) = refresh_seconds {
                    meta http-equiv="refresh" content=(seconds);
                }
                title { (title) " · hetsim" }
                link rel="stylesheet" href="/ui/app.css";
                script src="/ui/app.js" defer {}
            }
            body {
                header {
                    a.brand href="/" { "hetsim" }
                    nav {
                        @for (href, name) in SECTIONS {
                            a href=(href) { (name) }
                        }
                    }
                    form.logout method="post" action="/logout" { button type="submit" { "Log out" } }
                }
                main { (content) }
            }
        }
    }
}

/// A table with `headers` and rows of cells already rendered.
pub fn table<'a>(
    headers: impl IntoIterator<Item = &'a str>,
    rows: impl IntoIterator<Item = Markup>,
) -> Markup {
    html! {
        table {
            thead { tr { @for h in headers { th { (h) } } } }
            tbody { @for row in rows { (row) } }
        }
    }
}

/// A number as a person reads it: 6 significant digits, no exponent for ordinary sizes.
pub fn number(x: f64) -> String {
    if x == 0.0 {
        "0".to_owned()
    } else if (1e-3..1e7).contains(&x.abs()) {
        let digits = (5 - x.abs().log10().floor() as i32).clamp(0, 9) as usize;
        let text = format!("{x:.digits$}");
        if text.contains('.') {
            text.trim_end_matches('0').trim_end_matches('.').to_owned()
        } else {
            text
        }
    } else {
        let text = format!("{x:.5e}");
        match text.split_once('e') {
            Some((mantissa, exponent)) if mantissa.contains('.') => {
                format!(
                    "{}e{exponent}",
                    mantissa.trim_end_matches('0').trim_end_matches('.')
                )
            }
            _ => text,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::number;

    #[test]
    fn numbers_keep_six_significant_digits() {
        assert_eq!(number(0.595695981), "0.595696");
        assert_eq!(number(146.65), "146.65");
        assert_eq!(number(0.0), "0");
        assert_eq!(number(2.5e-6), "2.5e-6");
        assert_eq!(number(1.25e8), "1.25e8");
        assert_eq!(number(-3e-9), "-3e-9");
        assert_eq!(number(1234567.0), "1234567");
    }
}
