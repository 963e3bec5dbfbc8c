import { checkInt, fault, RulesDuration, RulesTimestamp, typeName, type RulesValue } from './values.js';
import { timestamp } from './library-time.js';

/** Arithmetic with the emulator's rules: int overflow and int division by zero are errors, int and float mix to float. */

const additions = 'int + int, float + float, string + string, duration + duration, duration + timestamp, timestamp + duration';

function unsupported(left: RulesValue, op: string, right: RulesValue, expected: string): never {
  throw fault(`Unsupported operation error. Received: ${typeName(left)} ${op} ${typeName(right)}. Expected: ${expected}.`);
}

function isNumber(value: RulesValue): value is bigint | number {
  return typeof value === 'bigint' || typeof value === 'number';
}

export function arithmetic(op: '+' | '-' | '*' | '/' | '%', left: RulesValue, right: RulesValue): RulesValue {
  if (typeof left === 'bigint' && typeof right === 'bigint') {
    switch (op) {
      case '+':
        return checkInt(left + right);
      case '-':
        return checkInt(left - right);
      case '*':
        return checkInt(left * right);
      case '/':
        if (right === 0n) throw fault('Divide by zero error.');
        return checkInt(left / right);
      case '%':
        if (right === 0n) throw fault('Divide by zero error.');
        return left % right;
    }
  }
  if (isNumber(left) && isNumber(right)) {
    const a = Number(left);
    const b = Number(right);
    switch (op) {
      case '+':
        return a + b;
      case '-':
        return a - b;
      case '*':
        return a * b;
      case '/':
        return a / b;
      case '%':
        return a % b;
    }
  }
  if (op === '+') {
    if (typeof left === 'string' && typeof right === 'string') return left + right;
    if (left instanceof RulesDuration && right instanceof RulesDuration) return new RulesDuration(checkInt(left.nanos + right.nanos));
    if (left instanceof RulesTimestamp && right instanceof RulesDuration) return timestamp(left.nanos + right.nanos);
    if (left instanceof RulesDuration && right instanceof RulesTimestamp) return timestamp(left.nanos + right.nanos);
    return unsupported(left, op, right, additions);
  }
  if (op === '-') {
    if (left instanceof RulesTimestamp && right instanceof RulesTimestamp) return new RulesDuration(left.nanos - right.nanos);
    if (left instanceof RulesTimestamp && right instanceof RulesDuration) return timestamp(left.nanos - right.nanos);
    if (left instanceof RulesDuration && right instanceof RulesDuration) return new RulesDuration(checkInt(left.nanos - right.nanos));
    return unsupported(left, op, right, 'int - int, float - float, duration - duration, timestamp - duration, timestamp - timestamp');
  }
  return unsupported(left, op, right, `int ${op} int, float ${op} float`);
}

export function negate(value: RulesValue): RulesValue {
  if (typeof value === 'bigint') return checkInt(-value);
  if (typeof value === 'number') return -value;
  if (value instanceof RulesDuration) return new RulesDuration(-value.nanos);
  throw fault(`Unsupported operation error. Received: -${typeName(value)}. Expected: -int, -float, -duration.`);
}

export function not(value: RulesValue): boolean {
  if (typeof value !== 'boolean') throw fault(`Unsupported operation error. Received: !${typeName(value)}. Expected: !bool.`);
  return !value;
}
