//! Rhai's built-in operators on integers, floats, texts and booleans, as Rhai 1.27 computes
//! them with its checks on (`src/func/builtin.rs`, `src/packages/arithmetic.rs`): checked
//! integer arithmetic with Rhai's messages, integers mixed with floats taken as floats, and
//! floats compared within a relative epsilon. The tests hold each against Rhai itself.

use rhai::{Dynamic, EvalAltResult, ImmutableString, Position, Token, FLOAT, INT};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operator {
    Add,
    Subtract,
    Multiply,
    Divide,
    Modulo,
    Power,
    Equal,
    NotEqual,
    Less,
    LessOrEqual,
    Greater,
    GreaterOrEqual,
}

/// An operand's type, as far as the operators tell them apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operand {
    Int,
    Float,
    Text,
    Bool,
}

impl Operator {
    /// The operator of a binary operator's token or of an op-assignment's.
    pub fn of(token: &Token) -> Option<Operator> {
        Some(match token {
            Token::Plus | Token::PlusAssign => Operator::Add,
            Token::Minus | Token::MinusAssign => Operator::Subtract,
            Token::Multiply | Token::MultiplyAssign => Operator::Multiply,
            Token::Divide | Token::DivideAssign => Operator::Divide,
            Token::Modulo | Token::ModuloAssign => Operator::Modulo,
            Token::PowerOf | Token::PowerOfAssign => Operator::Power,
            Token::EqualsTo => Operator::Equal,
            Token::NotEqualsTo => Operator::NotEqual,
            Token::LessThan => Operator::Less,
            Token::LessThanEqualsTo => Operator::LessOrEqual,
            Token::GreaterThan => Operator::Greater,
            Token::GreaterThanEqualsTo => Operator::GreaterOrEqual,
            _ => return None,
        })
    }

    fn compares(self) -> bool {
        matches!(
            self,
            Operator::Equal
                | Operator::NotEqual
                | Operator::Less
                | Operator::LessOrEqual
                | Operator::Greater
                | Operator::GreaterOrEqual
        )
    }

    /// The type of `left self right` where Rhai has a built-in for it (`None`: Rhai looks
    /// for a function, which the machine does not run). `Bool` for a comparison.
    pub fn result(self, left: Operand, right: Operand) -> Option<Operand> {
        use Operand::{Bool, Float, Int, Text};
        let comparable = matches!(
            (left, right),
            (Int | Float, Int | Float) | (Text, Text) | (Bool, Bool)
        );
        match (left, right) {
            _ if self.compares() => comparable.then_some(Bool),
            (Int, Int) => Some(Int),
            (Int | Float, Int | Float) => Some(Float),
            (Text, Text) if self == Operator::Add => Some(Text),
            _ => None,
        }
    }

    /// `left self right`, of operands this operator takes ([`Operator::result`]);
    /// `max_string` bounds a concatenation (0: unbounded).
    pub fn apply(
        self,
        left: &Dynamic,
        right: &Dynamic,
        max_string: usize,
    ) -> Result<Dynamic, Box<EvalAltResult>> {
        if let (Ok(x), Ok(y)) = (left.as_int(), right.as_int()) {
            return self.on_ints(x, y);
        }
        if let (Some(x), Some(y)) = (float(left), float(right)) {
            return Ok(self.on_floats(x, y));
        }
        if let (Ok(x), Ok(y)) = (left.as_bool(), right.as_bool()) {
            return Ok(Dynamic::from_bool(self.ordered(x.cmp(&y))));
        }
        match (
            left.read_lock::<ImmutableString>(),
            right.read_lock::<ImmutableString>(),
        ) {
            (Some(x), Some(y)) if self == Operator::Add => {
                if max_string > 0 && x.len() + y.len() > max_string {
                    let error =
                        EvalAltResult::ErrorDataTooLarge("Length of string".to_owned(), Position::NONE);
                    return Err(error.into());
                }
                Ok(Dynamic::from(&*x + &*y))
            }
            (Some(x), Some(y)) => Ok(Dynamic::from_bool(self.ordered(x.as_str().cmp(y.as_str())))),
            _ => unreachable!("the compiler gives {self:?} only operands it takes"),
        }
    }

    fn ordered(self, order: std::cmp::Ordering) -> bool {
        use std::cmp::Ordering::{Equal, Greater, Less};
        match self {
            Operator::Equal => order == Equal,
            Operator::NotEqual => order != Equal,
            Operator::Less => order == Less,
            Operator::LessOrEqual => order != Greater,
            Operator::Greater => order == Greater,
            Operator::GreaterOrEqual => order != Less,
            _ => unreachable!("only comparisons order"),
        }
    }

    fn on_ints(self, x: INT, y: INT) -> Result<Dynamic, Box<EvalAltResult>> {
        let fail = |message: String| -> Box<EvalAltResult> {
            EvalAltResult::ErrorArithmetic(message, Position::NONE).into()
        };
        let value = match self {
            Operator::Add => x
                .checked_add(y)
                .ok_or_else(|| fail(format!("Addition overflow: {x} + {y}")))?,
            Operator::Subtract => x
                .checked_sub(y)
                .ok_or_else(|| fail(format!("Subtraction overflow: {x} - {y}")))?,
            Operator::Multiply => x
                .checked_mul(y)
                .ok_or_else(|| fail(format!("Multiplication overflow: {x} * {y}")))?,
            Operator::Divide if y == 0 => return Err(fail(format!("Division by zero: {x} / {y}"))),
            Operator::Divide => x
                .checked_div(y)
                .ok_or_else(|| fail(format!("Division overflow: {x} / {y}")))?,
            Operator::Modulo => x
                .checked_rem(y)
                .ok_or_else(|| fail(format!("Modulo division by zero or overflow: {x} % {y}")))?,
            Operator::Power if y > INT::from(u32::MAX) => {
                return Err(fail(format!("Exponential overflow: {x} ** {y}")))
            }
            Operator::Power if y < 0 => {
                return Err(fail(format!("Integer raised to a negative power: {x} ** {y}")))
            }
            Operator::Power => u32::try_from(y)
                .ok()
                .and_then(|y| x.checked_pow(y))
                .ok_or_else(|| fail(format!("Exponential overflow: {x} ** {y}")))?,
            comparison => return Ok(Dynamic::from_bool(comparison.ordered(x.cmp(&y)))),
        };
        Ok(Dynamic::from_int(value))
    }

    fn on_floats(self, x: FLOAT, y: FLOAT) -> Dynamic {
        // Rhai's checked comparisons: within FLOAT::EPSILON of the larger magnitude.
        let max = if x * y == 0.0 { 1.0 } else { x.abs().max(y.abs()) };
        let within =
            |holds: bool, degenerate: bool| Dynamic::from_bool(if max == 0.0 { degenerate } else { holds });
        match self {
            Operator::Add => Dynamic::from_float(x + y),
            Operator::Subtract => Dynamic::from_float(x - y),
            Operator::Multiply => Dynamic::from_float(x * y),
            Operator::Divide => Dynamic::from_float(x / y),
            Operator::Modulo => Dynamic::from_float(x % y),
            Operator::Power => Dynamic::from_float(x.powf(y)),
            Operator::Equal => within((x - y).abs() / max <= FLOAT::EPSILON, true),
            Operator::NotEqual => within((x - y).abs() / max > FLOAT::EPSILON, false),
            Operator::Greater => within((x - y) / max > FLOAT::EPSILON, false),
            Operator::GreaterOrEqual => within((x - y) / max > -FLOAT::EPSILON, true),
            Operator::Less => within((y - x) / max > FLOAT::EPSILON, false),
            Operator::LessOrEqual => within((y - x) / max > -FLOAT::EPSILON, true),
        }
    }
}

/// A float, or an integer taken as one (`as`, as Rhai takes it).
fn float(value: &Dynamic) -> Option<FLOAT> {
    if value.is_float() {
        value.as_float().ok()
    } else {
        value.as_int().ok().map(|i| i as FLOAT)
    }
}

/// `-value` of an integer (checked, with the message of Rhai's fast unary minus) or a float.
pub fn negate(value: &Dynamic) -> Result<Dynamic, Box<EvalAltResult>> {
    match value.as_int() {
        Ok(x) => x.checked_neg().map(Dynamic::from_int).ok_or_else(|| {
            EvalAltResult::ErrorArithmetic("integer overflow".to_owned(), Position::NONE).into()
        }),
        Err(_) => Ok(Dynamic::from_float(-float(value).unwrap_or(FLOAT::NAN))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const OPERATORS: [(&str, Operator); 12] = [
        ("+", Operator::Add),
        ("-", Operator::Subtract),
        ("*", Operator::Multiply),
        ("/", Operator::Divide),
        ("%", Operator::Modulo),
        ("**", Operator::Power),
        ("==", Operator::Equal),
        ("!=", Operator::NotEqual),
        ("<", Operator::Less),
        ("<=", Operator::LessOrEqual),
        (">", Operator::Greater),
        (">=", Operator::GreaterOrEqual),
    ];

    fn operand_type(value: &Dynamic) -> Operand {
        if value.is_int() {
            Operand::Int
        } else if value.is_float() {
            Operand::Float
        } else if value.is_bool() {
            Operand::Bool
        } else {
            Operand::Text
        }
    }

    /// An error's message, without its place.
    fn message(error: Box<EvalAltResult>) -> String {
        message_of(&error)
    }

    fn message_of(error: &EvalAltResult) -> String {
        match error {
            EvalAltResult::ErrorArithmetic(message, _) => message.clone(),
            other => other.to_string(),
        }
    }

    /// What Rhai gives for `expression` over `x` and `y`.
    fn rhai(expression: &str, x: &Dynamic, y: &Dynamic) -> Result<Dynamic, String> {
        let mut scope = rhai::Scope::new();
        scope.push_dynamic("x", x.clone());
        scope.push_dynamic("y", y.clone());
        rhai::Engine::new()
            .eval_with_scope::<Dynamic>(&mut scope, expression)
            .map_err(message)
    }

    /// A value as its type and bits show it (`NaN` equal to itself).
    fn shown(result: Result<Dynamic, String>) -> Result<String, String> {
        result.map(|v| format!("{v:?} {}", v.type_name()))
    }

    fn value() -> impl Strategy<Value = Dynamic> {
        prop_oneof![
            prop_oneof![
                Just(INT::MAX),
                Just(INT::MIN),
                Just(0),
                Just(-1),
                Just(1),
                -70i64..70,
                any::<i64>()
            ]
            .prop_map(Dynamic::from_int),
            prop_oneof![
                Just(0.0),
                Just(-0.0),
                Just(1.0),
                Just(1.0 + 1e-16),
                Just(FLOAT::NAN),
                Just(FLOAT::INFINITY),
                -1e3f64..1e3,
                any::<f64>()
            ]
            .prop_map(Dynamic::from_float),
            prop_oneof![Just("a"), Just("b"), Just(""), Just("ab")].prop_map(Dynamic::from),
            any::<bool>().prop_map(Dynamic::from_bool),
        ]
    }

    proptest! {
        // Most pairs of random types have no built-in operator: they are drawn again.
        #![proptest_config(ProptestConfig { cases: 3000, max_global_rejects: 100_000, ..ProptestConfig::default() })]

        /// Every operator the machine takes gives Rhai's value (to the bit) or Rhai's error.
        #[test]
        fn operators_are_rhais(x in value(), y in value(), which in 0usize..12) {
            let (symbol, op) = OPERATORS[which];
            prop_assume!(op.result(operand_type(&x), operand_type(&y)).is_some());
            let ours = op.apply(&x, &y, 0).map_err(message);
            prop_assert_eq!(shown(ours), shown(rhai(&format!("x {symbol} y"), &x, &y)));
        }

        #[test]
        fn negation_is_rhais(x in value()) {
            prop_assume!(x.is_int() || x.is_float());
            let ours = negate(&x).map_err(message);
            prop_assert_eq!(shown(ours), shown(rhai("-x", &x, &Dynamic::UNIT)));
        }
    }

    /// Operators Rhai has no built-in for are left to Rhai.
    #[test]
    fn mixed_texts_and_numbers_are_not_taken() {
        assert_eq!(Operator::Add.result(Operand::Text, Operand::Int), None);
        assert_eq!(Operator::Less.result(Operand::Bool, Operand::Int), None);
        assert_eq!(Operator::Multiply.result(Operand::Bool, Operand::Bool), None);
        assert_eq!(
            Operator::Add.result(Operand::Int, Operand::Float),
            Some(Operand::Float)
        );
    }
}
