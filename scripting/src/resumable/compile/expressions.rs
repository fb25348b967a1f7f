//! Expressions: constants, variables, the run's labels, operators, literals and `sim` calls.

use hetsim_simulator::collectives::Collective;
use rhai::{ASTFlags, Dynamic, Expr, FnCallExpr, Map, Position, Stmt, Token};

use super::{at, Binding, Compiler, Refused, Type};
use crate::resumable::operators::Operator;
use crate::resumable::program::Op;
use crate::sim::{Method, Received, COLLECTIVES};

impl Compiler<'_> {
    pub(super) fn resolve(&self, name: &str) -> Option<Binding> {
        if let Some((_, binding)) = self.bindings.iter().rev().find(|(n, _)| n == name) {
            return Some(binding.clone());
        }
        (name == "labels").then(|| Binding::Constant(Dynamic::from_map(self.labels.clone()), Type::Map))
    }

    fn constant(&mut self, value: Dynamic) -> Result<Type, Refused> {
        let kind = Type::of(&value).ok_or_else(|| format!("a constant of type {}", value.type_name()))?;
        self.code.push(Op::Const(value));
        Ok(kind)
    }

    pub(super) fn expr(&mut self, expr: &Expr) -> Result<Type, Refused> {
        match expr {
            Expr::IntegerConstant(value, _) => self.constant(Dynamic::from_int(*value)),
            Expr::FloatConstant(value, _) => self.constant(Dynamic::from_float(**value)),
            Expr::StringConstant(value, _) => self.constant(Dynamic::from(value.clone())),
            Expr::BoolConstant(value, _) => self.constant(Dynamic::from_bool(*value)),
            Expr::Unit(_) => self.constant(Dynamic::UNIT),
            // A literal Rhai's optimiser folded (an array or a map of constants): Rhai checks
            // no size limit on it when it runs, nor does the machine.
            Expr::DynamicConstant(value, position) => self
                .constant((**value).clone())
                .map_err(|why| format!("{why}{}", at(*position))),
            Expr::InterpolatedString(parts, _) => {
                let places = self.scalars(parts, "an interpolated value")?;
                self.code.push(Op::Concat { parts: places });
                Ok(Type::Text)
            }
            Expr::Array(items, _) => {
                let places = self.scalars(items, "an array item")?;
                self.code.push(Op::Array { items: places });
                Ok(Type::Array)
            }
            Expr::Map(map, _) => {
                let (entries, template) = &**map;
                let mut keys = Vec::with_capacity(entries.len());
                for (key, value) in entries.iter() {
                    let kind = self.expr(value)?;
                    if !kind.is_scalar() {
                        return Err(format!("a map value of type {kind:?}{}", at(value.position())));
                    }
                    keys.push((key.name.as_str().into(), value.position()));
                }
                self.code.push(Op::Map {
                    keys: keys.into(),
                    template: Box::new(template.clone()),
                });
                Ok(Type::Map)
            }
            Expr::Variable(variable, _, position) => {
                let (_, name, namespace, _) = &**variable;
                if !namespace.is_empty() {
                    return Err(format!("a variable in a module{}", at(*position)));
                }
                match self.resolve(name) {
                    Some(Binding::Slot(slot, kind)) => {
                        self.code.push(Op::Load(slot));
                        Ok(kind)
                    }
                    Some(Binding::Constant(value, kind)) => {
                        self.code.push(Op::Const(value));
                        Ok(kind)
                    }
                    Some(Binding::Sim) => Err(format!("`sim` used as a value{}", at(*position))),
                    None => Err(format!("an unknown variable `{name}`{}", at(*position))),
                }
            }
            Expr::Index(index, _, position) => self.label_count(&index.lhs, &index.rhs, *position),
            Expr::Dot(dot, flags, position) => match (&dot.lhs, &dot.rhs) {
                (Expr::Variable(variable, ..), Expr::MethodCall(call, at_call))
                    if variable.2.is_empty()
                        && !flags.contains(ASTFlags::NEGATED)
                        && matches!(self.resolve(&variable.1), Some(Binding::Sim)) =>
                {
                    self.method(call, *at_call)
                }
                (Expr::Variable(variable, ..), Expr::Property(property, _))
                    if variable.2.is_empty()
                        && !flags.contains(ASTFlags::NEGATED)
                        && matches!(self.resolve(&variable.1), Some(Binding::Slot(_, Type::Message))) =>
                {
                    self.message_field(&dot.lhs, &property.2, *position)
                }
                _ => Err(format!(
                    "a property or a method of something else than `sim`{}",
                    at(*position)
                )),
            },
            Expr::FnCall(call, position) => self.function(call, *position),
            Expr::And(operands, _) => self.logical(operands, true),
            Expr::Or(operands, _) => self.logical(operands, false),
            Expr::Stmt(block) => match block.statements() {
                [Stmt::If(flow, _)] => self.if_value(flow),
                statements => self.block_value(statements),
            },
            other => Err(format!(
                "an expression the machine does not run{}",
                at(other.position())
            )),
        }
    }

    /// `labels["name"]`: the run's count of a label (`()` for a label it lacks), known now.
    fn label_count(&mut self, map: &Expr, key: &Expr, position: Position) -> Result<Type, Refused> {
        let refused = || {
            format!(
                "an index into something else than the run's labels{}",
                at(position)
            )
        };
        let (Expr::Variable(variable, ..), Expr::StringConstant(key, _)) = (map, key) else {
            return Err(refused());
        };
        match self.resolve(&variable.1) {
            Some(Binding::Constant(map, Type::Map)) if variable.2.is_empty() => {
                let value = map.read_lock::<Map>().and_then(|m| m.get(key.as_str()).cloned());
                self.constant(value.unwrap_or(Dynamic::UNIT))
            }
            _ => Err(refused()),
        }
    }

    /// `m.bytes` and the other fields of a message a variable holds.
    fn message_field(&mut self, message: &Expr, field: &str, position: Position) -> Result<Type, Refused> {
        let Some(&name) = Received::FIELDS.iter().find(|&&name| name == field) else {
            return Err(format!("a message's property `{field}`{}", at(position)));
        };
        let kind = match name {
            "from_label" => Type::Text,
            "from" | "from_rank" => Type::Int,
            _ => Type::Float,
        };
        self.expr(message)?;
        self.code.push(Op::Field(name));
        Ok(kind)
    }

    /// Compiles `items`, each a number, a text or a boolean; their places.
    fn scalars(&mut self, items: &[Expr], what: &str) -> Result<Box<[Position]>, Refused> {
        let mut places = Vec::with_capacity(items.len());
        for item in items {
            let kind = self.expr(item)?;
            if !kind.is_scalar() {
                return Err(format!("{what} of type {kind:?}{}", at(item.position())));
            }
            places.push(item.position());
        }
        Ok(places.into())
    }

    /// `a && b && …` (`all`) or `a || b || …`, short-circuited, of booleans.
    fn logical(&mut self, operands: &[Expr], all: bool) -> Result<Type, Refused> {
        let mut decided = Vec::new();
        for operand in operands {
            self.condition(operand)?;
            if !all {
                self.code.push(Op::Not);
            }
            decided.push(self.here());
            self.code.push(Op::JumpUnless(usize::MAX));
        }
        self.code.push(Op::Const(Dynamic::from_bool(all)));
        let to_end = self.here();
        self.code.push(Op::Jump(usize::MAX));
        let short = self.here();
        for jump in decided {
            self.patch(jump, short);
        }
        self.code.push(Op::Const(Dynamic::from_bool(!all)));
        let end = self.here();
        self.patch(to_end, end);
        Ok(Type::Bool)
    }

    /// An operator or a function: Rhai's built-in operators, `!`, `-` and `is_def_var`.
    fn function(&mut self, call: &FnCallExpr, position: Position) -> Result<Type, Refused> {
        if let Some(known) = self.is_def_var(call) {
            return self.constant(Dynamic::from_bool(known));
        }
        let refused = || format!("the function `{}`{}", call.name, at(position));
        let Some(token) = call.op_token.as_ref().filter(|_| call.namespace.is_empty()) else {
            return Err(refused());
        };
        match (token, call.args.as_slice()) {
            (Token::Bang, [operand]) => {
                self.condition(operand)?;
                self.code.push(Op::Not);
                Ok(Type::Bool)
            }
            (Token::Minus, [operand]) => match self.expr(operand)? {
                kind @ (Type::Int | Type::Float) => {
                    self.code.push(Op::Negate { at: position });
                    Ok(kind)
                }
                _ => Err(refused()),
            },
            (token, [left, right]) => {
                let operator = Operator::of(token).ok_or_else(refused)?;
                let (left, right) = (self.expr(left)?, self.expr(right)?);
                self.binary(operator, left, right, position).ok_or_else(refused)
            }
            _ => Err(refused()),
        }
    }

    /// Emits `operator` on operands of these types, where Rhai has a built-in for them.
    pub(super) fn binary(
        &mut self,
        operator: Operator,
        left: Type,
        right: Type,
        position: Position,
    ) -> Option<Type> {
        let result = operator.result(left.operand()?, right.operand()?)?;
        self.code.push(Op::Binary {
            operator,
            at: position,
        });
        Some(Type::of_operand(result))
    }

    /// A method of `sim` the machine calls: its overload by its arguments' types.
    fn method(&mut self, call: &FnCallExpr, position: Position) -> Result<Type, Refused> {
        let refused = || format!("`sim.{}` with these arguments{}", call.name, at(position));
        let mut kinds = Vec::with_capacity(call.args.len());
        for arg in call.args.iter() {
            kinds.push(self.expr(arg)?);
        }
        let (method, result) = match (call.name.as_str(), kinds.as_slice()) {
            ("now", []) => (Method::Now, Type::Float),
            ("log", [_]) => (Method::Log, Type::Unit),
            ("send", [_, _]) => (Method::Send, Type::Unit),
            ("send", [_, _, _]) => (Method::SendWith, Type::Unit),
            ("send", [_, _, _, _]) => (Method::SendWayWith, Type::Unit),
            ("receive", [_]) => (Method::Receive, Type::Message),
            ("compute", [Type::Map]) => (Method::ComputeModel, Type::Float),
            ("compute", [Type::Int | Type::Float]) => (Method::ComputeSeconds, Type::Float),
            ("sleep", [_]) => (Method::Sleep, Type::Unit),
            ("barrier", [] | [Type::Map]) => (Method::Collective(Collective::Barrier), Type::Float),
            (name, [_] | [_, Type::Map]) => match COLLECTIVES.iter().find(|(n, _)| *n == name) {
                Some(&(_, collective)) => (Method::Collective(collective), Type::Float),
                None => return Err(refused()),
            },
            _ => return Err(refused()),
        };
        let args = u8::try_from(kinds.len()).map_err(|_| "too many arguments".to_owned())?;
        self.code.push(Op::Call {
            method,
            args,
            at: position,
        });
        Ok(result)
    }
}
