//! Rhai's AST of an application script to a [`Program`], where the script keeps to what the
//! machine runs with Rhai's exact results; anything else is refused with the reason, and the
//! script runs on Rhai itself.
//!
//! Each expression's type is known when compiled: the run's variables, its labels and a
//! process's `tag`, `rank` and `pid` are known then, and so is what each `sim` method
//! returns. So no operation the machine runs can meet a type Rhai would refuse at run time:
//! those scripts (a range over a float, a label the run lacks) are refused here and fail on
//! Rhai with Rhai's own message. What remains to fail at run time is a `sim` call's
//! arguments and the engine's answers, which both ways check with the same code.

use rhai::{
    ASTFlags, BinaryExpr, Dynamic, Expr, FlowControl, FnCallExpr, ImmutableString, Map, OpAssignment,
    Position, Stmt, Token, AST,
};

use super::operators::{Operand, Operator};
use super::program::{Op, Program, Slot};

mod expressions;

/// The slots of the values every process starts with.
pub const TAG: Slot = 0;
pub const RANK: Slot = 1;
pub const PID: Slot = 2;

/// What a run gives every script before it runs: its variables and its labels' counts.
pub struct Names<'a> {
    pub variables: Vec<(String, Dynamic)>,
    pub labels: &'a Map,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Type {
    Int,
    Float,
    Bool,
    Text,
    Unit,
    Array,
    Map,
    Message,
    /// One of several (an `if` whose branches differ): only passed on, to `sim` or a variable.
    Any,
}

impl Type {
    fn of(value: &Dynamic) -> Option<Type> {
        Some(if value.is_int() {
            Type::Int
        } else if value.is_float() {
            Type::Float
        } else if value.is_bool() {
            Type::Bool
        } else if value.is_string() {
            Type::Text
        } else if value.is_unit() {
            Type::Unit
        } else if value.is_map() {
            Type::Map
        } else if value.is_array() {
            Type::Array
        } else {
            return None;
        })
    }

    /// A number, a text or a boolean: what interpolation and literals take, sized as Rhai sizes them.
    fn is_scalar(self) -> bool {
        matches!(self, Type::Int | Type::Float | Type::Bool | Type::Text)
    }

    fn operand(self) -> Option<Operand> {
        Some(match self {
            Type::Int => Operand::Int,
            Type::Float => Operand::Float,
            Type::Text => Operand::Text,
            Type::Bool => Operand::Bool,
            _ => return None,
        })
    }

    fn of_operand(operand: Operand) -> Type {
        match operand {
            Operand::Int => Type::Int,
            Operand::Float => Type::Float,
            Operand::Text => Type::Text,
            Operand::Bool => Type::Bool,
        }
    }

    fn or(self, other: Type) -> Type {
        if self == other {
            self
        } else {
            Type::Any
        }
    }
}

#[derive(Clone, Debug)]
enum Binding {
    Slot(Slot, Type),
    Constant(Dynamic, Type),
    Sim,
}

/// The loop being compiled: where `continue` goes, the `break`s to point at its exit, and
/// its place.
struct Loop {
    next: usize,
    breaks: Vec<usize>,
    at: Position,
}

type Refused = String;

struct Compiler<'a> {
    code: Vec<Op>,
    bindings: Vec<(ImmutableString, Binding)>,
    labels: &'a Map,
    /// Slots in use, and the most ever in use.
    used: usize,
    most: usize,
    loops: Vec<Loop>,
}

/// `ast` as a program, or why it cannot be one.
pub fn compile(ast: &AST, names: &Names) -> Result<Program, Refused> {
    if ast.has_functions() {
        return Err("the script defines functions".to_owned());
    }
    let mut bindings = vec![
        ("tag".into(), Binding::Slot(TAG, Type::Text)),
        ("rank".into(), Binding::Slot(RANK, Type::Int)),
        ("pid".into(), Binding::Slot(PID, Type::Int)),
    ];
    for (name, value) in &names.variables {
        let kind = Type::of(value).ok_or_else(|| format!("variable `{name}` has no simple type"))?;
        bindings.push((name.as_str().into(), Binding::Constant(value.clone(), kind)));
    }
    bindings.push(("sim".into(), Binding::Sim));
    let used = usize::from(PID) + 1;
    let mut compiler = Compiler {
        code: Vec::new(),
        bindings,
        labels: names.labels,
        used,
        most: used,
        loops: Vec::new(),
    };
    compiler.block(ast.statements())?;
    compiler.code.push(Op::End);
    Ok(Program {
        code: compiler.code,
        slots: compiler.most,
    })
}

fn at(position: Position) -> String {
    match position.line() {
        Some(line) => format!(" (line {line})"),
        None => String::new(),
    }
}

impl Compiler<'_> {
    fn here(&self) -> usize {
        self.code.len()
    }

    fn new_slot(&mut self) -> Result<Slot, Refused> {
        let slot = Slot::try_from(self.used).map_err(|_| "too many variables".to_owned())?;
        self.used += 1;
        self.most = self.most.max(self.used);
        Ok(slot)
    }

    fn patch(&mut self, jump: usize, to: usize) {
        match &mut self.code[jump] {
            Op::Jump(target) | Op::JumpUnless(target) | Op::RangeNext { exit: target, .. } => *target = to,
            _ => unreachable!("only jumps are patched"),
        }
    }

    /// Runs `compile` in a scope of its own: the variables it declares, and their slots, end
    /// with it.
    fn scoped<T>(&mut self, compile: impl FnOnce(&mut Self) -> Result<T, Refused>) -> Result<T, Refused> {
        let (bindings, used) = (self.bindings.len(), self.used);
        let compiled = compile(self);
        self.bindings.truncate(bindings);
        self.used = used;
        compiled
    }

    /// Compiles `statements` in a scope of their own.
    fn block(&mut self, statements: &[Stmt]) -> Result<(), Refused> {
        self.scoped(|c| statements.iter().try_for_each(|statement| c.statement(statement)))
    }

    /// Compiles `statements` in a scope of their own, leaving the last one's value.
    fn block_value(&mut self, statements: &[Stmt]) -> Result<Type, Refused> {
        self.scoped(|c| match statements.split_last() {
            None => {
                c.code.push(Op::Const(Dynamic::UNIT));
                Ok(Type::Unit)
            }
            Some((Stmt::Expr(last), rest)) => {
                rest.iter().try_for_each(|statement| c.statement(statement))?;
                c.expr(last)
            }
            Some((last, _)) => Err(format!(
                "a block whose value is a statement{}",
                at(last.position())
            )),
        })
    }

    fn statement(&mut self, statement: &Stmt) -> Result<(), Refused> {
        match statement {
            Stmt::Noop(_) => {}
            Stmt::Var(var, flags, position) => {
                if flags.contains(ASTFlags::EXPORTED) {
                    return Err(format!("an exported variable{}", at(*position)));
                }
                let (ident, value, _) = &**var;
                let kind = self.expr(value)?;
                let slot = self.new_slot()?;
                self.code.push(Op::Store(slot));
                self.bindings
                    .push((ident.name.clone(), Binding::Slot(slot, kind)));
            }
            Stmt::If(flow, _) => self.if_statement(flow)?,
            Stmt::While(flow, position) => self.while_loop(flow, *position)?,
            Stmt::For(for_loop, position) => {
                let (var, counter, flow) = &**for_loop;
                if counter.is_some() {
                    return Err(format!("a `for` loop with a counter{}", at(*position)));
                }
                self.for_loop(&var.name, flow, *position)?;
            }
            Stmt::Expr(expr) => {
                self.expr(expr)?;
                self.code.push(Op::Pop);
            }
            Stmt::Block(block) => self.block(block.statements())?,
            Stmt::Assignment(assignment) => {
                let (operation, BinaryExpr { lhs, rhs }) = &**assignment;
                self.assignment(operation, lhs, rhs)?;
            }
            Stmt::BreakLoop(None, flags, position) => self.break_or_continue(*flags, *position)?,
            Stmt::Return(None, flags, _) if flags.is_empty() => self.code.push(Op::End),
            other => {
                return Err(format!(
                    "a statement the machine does not run{}",
                    at(other.position())
                ))
            }
        }
        Ok(())
    }

    fn break_or_continue(&mut self, flags: ASTFlags, position: Position) -> Result<(), Refused> {
        let jump = self.here();
        let innermost = self
            .loops
            .last_mut()
            .ok_or_else(|| format!("`break` outside a loop{}", at(position)))?;
        if flags.contains(ASTFlags::BREAK) {
            innermost.breaks.push(jump);
            self.code.push(Op::Jump(usize::MAX));
        } else {
            let (to, at) = (innermost.next, innermost.at);
            self.code.push(Op::Repeat { to, at });
        }
        Ok(())
    }

    /// A condition: `Some` where it is known when compiled (`is_def_var`, a constant).
    fn known_condition(&self, expr: &Expr) -> Option<bool> {
        match expr {
            Expr::BoolConstant(value, _) => Some(*value),
            Expr::FnCall(call, _) => self.is_def_var(call),
            // Known where the operands are, up to the first that decides (Rhai evaluates no
            // further): `is_def_var("x") && x == 1` without `x` is false.
            Expr::And(operands, _) | Expr::Or(operands, _) => {
                let decides = matches!(expr, Expr::Or(..));
                for operand in operands.iter() {
                    if self.known_condition(operand)? == decides {
                        return Some(decides);
                    }
                }
                Some(!decides)
            }
            _ => None,
        }
    }

    /// `is_def_var("name")`: whether the name is a variable of the scope here (as Rhai
    /// answers, the run's `labels` are not).
    fn is_def_var(&self, call: &FnCallExpr) -> Option<bool> {
        match (call.name.as_str(), call.args.as_slice()) {
            ("is_def_var", [Expr::StringConstant(name, _)])
                if call.namespace.is_empty() && call.op_token.is_none() =>
            {
                Some(self.bindings.iter().any(|(n, _)| n == name))
            }
            _ => None,
        }
    }

    fn condition(&mut self, expr: &Expr) -> Result<(), Refused> {
        match self.expr(expr)? {
            Type::Bool => Ok(()),
            other => Err(format!("a condition of type {other:?}{}", at(expr.position()))),
        }
    }

    fn if_statement(&mut self, flow: &FlowControl) -> Result<(), Refused> {
        self.branches(flow, |c, block| c.block(block).map(|()| Type::Unit))
            .map(|_| ())
    }

    fn if_value(&mut self, flow: &FlowControl) -> Result<Type, Refused> {
        self.branches(flow, Compiler::block_value)
    }

    /// An `if`: only the branch taken where the condition is known when compiled, else both
    /// behind a jump; each branch compiled by `arm` (as statements, or leaving a value).
    fn branches(
        &mut self,
        flow: &FlowControl,
        arm: impl Fn(&mut Self, &[Stmt]) -> Result<Type, Refused>,
    ) -> Result<Type, Refused> {
        if let Some(taken) = self.known_condition(&flow.expr) {
            let block = if taken { &flow.body } else { &flow.branch };
            return arm(self, block.statements());
        }
        self.condition(&flow.expr)?;
        let to_else = self.here();
        self.code.push(Op::JumpUnless(usize::MAX));
        let body = arm(self, flow.body.statements())?;
        let to_end = self.here();
        self.code.push(Op::Jump(usize::MAX));
        let else_start = self.here();
        self.patch(to_else, else_start);
        let branch = arm(self, flow.branch.statements())?;
        let end = self.here();
        self.patch(to_end, end);
        Ok(body.or(branch))
    }

    fn while_loop(&mut self, flow: &FlowControl, position: Position) -> Result<(), Refused> {
        let head = self.here();
        let exit_jump = match &flow.expr {
            // `loop`: no condition.
            Expr::Unit(_) => None,
            condition => {
                self.condition(condition)?;
                self.code.push(Op::JumpUnless(usize::MAX));
                Some(self.here() - 1)
            }
        };
        self.loop_body(flow, head, position)?;
        let exit = self.here();
        if let Some(jump) = exit_jump {
            self.patch(jump, exit);
        }
        self.close_loop(exit);
        Ok(())
    }

    fn loop_body(&mut self, flow: &FlowControl, next: usize, position: Position) -> Result<(), Refused> {
        if !flow.branch.is_empty() {
            return Err(format!("a loop with an `else` branch{}", at(position)));
        }
        self.loops.push(Loop {
            next,
            breaks: Vec::new(),
            at: position,
        });
        self.block(flow.body.statements())?;
        self.code.push(Op::Repeat {
            to: next,
            at: position,
        });
        Ok(())
    }

    fn close_loop(&mut self, exit: usize) {
        if let Some(finished) = self.loops.pop() {
            for jump in finished.breaks {
                self.patch(jump, exit);
            }
        }
    }

    /// Pushes the ends of the range a `for` loop runs over; whether it is inclusive.
    fn range(&mut self, expr: &Expr, position: Position) -> Result<bool, Refused> {
        match expr {
            Expr::FnCall(call, _) if call.args.len() == 2 && call.namespace.is_empty() => {
                let inclusive = match call.op_token {
                    Some(Token::ExclusiveRange) => false,
                    Some(Token::InclusiveRange) => true,
                    _ => {
                        return Err(format!(
                            "a `for` loop over something else than a range{}",
                            at(position)
                        ))
                    }
                };
                for end in &call.args {
                    if self.expr(end)? != Type::Int {
                        return Err(format!(
                            "a range whose ends are not integers{}",
                            at(end.position())
                        ));
                    }
                }
                Ok(inclusive)
            }
            // Rhai's optimiser folds a range of two constants into one.
            Expr::DynamicConstant(value, _) => {
                let (start, end, inclusive) = if let Some(r) = value.read_lock::<std::ops::Range<i64>>() {
                    (r.start, r.end, false)
                } else if let Some(r) = value.read_lock::<std::ops::RangeInclusive<i64>>() {
                    (*r.start(), *r.end(), true)
                } else {
                    return Err(format!(
                        "a `for` loop over something else than a range{}",
                        at(position)
                    ));
                };
                self.code.push(Op::Const(Dynamic::from_int(start)));
                self.code.push(Op::Const(Dynamic::from_int(end)));
                Ok(inclusive)
            }
            _ => Err(format!(
                "a `for` loop over something else than a range{}",
                at(position)
            )),
        }
    }

    /// `for var in start..end` (or `..=`) over integers.
    fn for_loop(
        &mut self,
        var: &ImmutableString,
        flow: &FlowControl,
        position: Position,
    ) -> Result<(), Refused> {
        let inclusive = self.range(&flow.expr, position)?;
        self.scoped(|c| {
            let counter = c.new_slot()?;
            c.new_slot()?;
            let slot = c.new_slot()?;
            c.code.push(Op::RangeStart { counter, inclusive });
            let head = c.here();
            c.code.push(Op::RangeNext {
                counter,
                var: slot,
                exit: usize::MAX,
            });
            c.bindings.push((var.clone(), Binding::Slot(slot, Type::Int)));
            c.loop_body(flow, head, position)?;
            let exit = c.here();
            c.patch(head, exit);
            c.close_loop(exit);
            Ok(())
        })
    }

    /// `name = value` or `name op= value`, to a variable the script made, keeping its type
    /// (a change of type, or a constant assigned to, is left to Rhai).
    fn assignment(&mut self, assignment: &OpAssignment, target: &Expr, value: &Expr) -> Result<(), Refused> {
        let position = assignment.position();
        let refused = || format!("an assignment the machine does not run{}", at(position));
        let Expr::Variable(variable, _, _) = target else {
            return Err(refused());
        };
        let Some(Binding::Slot(slot, kind)) = self.resolve(&variable.1).filter(|_| variable.2.is_empty())
        else {
            return Err(refused());
        };
        if [TAG, RANK, PID].contains(&slot) {
            return Err(refused());
        }
        let result = match assignment.get_op_assignment_info() {
            None => self.expr(value)?,
            Some((_, _, token, ..)) => {
                let operator = Operator::of(token).ok_or_else(refused)?;
                // Rhai's built-in op-assignments: numbers onto an integer or a float.
                if !matches!(kind, Type::Int | Type::Float) {
                    return Err(refused());
                }
                self.code.push(Op::Load(slot));
                let right = self.expr(value)?;
                self.binary(operator, kind, right, position).ok_or_else(refused)?
            }
        };
        if result != kind {
            return Err(refused());
        }
        self.code.push(Op::Store(slot));
        Ok(())
    }
}
