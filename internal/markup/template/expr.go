package template

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// {{#expr}} evaluates the way MediaWiki's ParserFunctions does: numbers
// are floats; operators by precedence, highest first:
//
//	unary + -, e (scientific notation: 2e3)
//	not, abs, floor, ceil, trunc, sqrt, exp, ln, sin, cos, tan, asin, acos, atan
//	^
//	* / div mod fmod
//	+ -
//	round (x round digits)
//	= != <> < > <= >=
//	and
//	or
//
// with parentheses, and the constants e and pi. Operators of equal
// precedence group to the left (2^3^2 is 64, as MediaWiki). The work is
// linear in the expression, whose length is bounded.

const (
	maxExpr      = 1000 // bytes
	maxExprStack = 100  // operands or operators waiting
)

type exprOp int

const (
	opNone exprOp = iota
	opOpen
	opNegative
	opPositive
	opExponent
	opNot
	opAbs
	opFloor
	opCeil
	opTrunc
	opSqrt
	opExp
	opLn
	opSin
	opCos
	opTan
	opAsin
	opAcos
	opAtan
	opPow
	opTimes
	opDivide
	opMod
	opFmod
	opPlus
	opMinus
	opRound
	opEq
	opNotEq
	opLess
	opGreater
	opLessEq
	opGreaterEq
	opAnd
	opOr
)

var exprPrecedence = [...]int{
	opOpen: -1, opNegative: 10, opPositive: 10, opExponent: 10,
	opNot: 9, opAbs: 9, opFloor: 9, opCeil: 9, opTrunc: 9, opSqrt: 9, opExp: 9, opLn: 9,
	opSin: 9, opCos: 9, opTan: 9, opAsin: 9, opAcos: 9, opAtan: 9,
	opPow: 8, opTimes: 7, opDivide: 7, opMod: 7, opFmod: 7, opPlus: 6, opMinus: 6,
	opRound: 5, opEq: 4, opNotEq: 4, opLess: 4, opGreater: 4, opLessEq: 4, opGreaterEq: 4,
	opAnd: 3, opOr: 2,
}

var exprNames = [...]string{
	opNegative: "-", opPositive: "+", opExponent: "e", opNot: "not", opAbs: "abs", opFloor: "floor",
	opCeil: "ceil", opTrunc: "trunc", opSqrt: "sqrt", opExp: "exp", opLn: "ln", opSin: "sin",
	opCos: "cos", opTan: "tan", opAsin: "asin", opAcos: "acos", opAtan: "atan", opPow: "^",
	opTimes: "*", opDivide: "/", opMod: "mod", opFmod: "fmod", opPlus: "+", opMinus: "-",
	opRound: "round", opEq: "=", opNotEq: "<>", opLess: "<", opGreater: ">", opLessEq: "<=",
	opGreaterEq: ">=", opAnd: "and", opOr: "or",
}

// exprPrefix returns the prefix operator a word (in lower case) names:
// unary functions and "not".
func exprPrefix(word string) exprOp {
	switch word {
	case "not":
		return opNot
	case "abs":
		return opAbs
	case "floor":
		return opFloor
	case "ceil":
		return opCeil
	case "trunc":
		return opTrunc
	case "sqrt":
		return opSqrt
	case "exp":
		return opExp
	case "ln":
		return opLn
	case "sin":
		return opSin
	case "cos":
		return opCos
	case "tan":
		return opTan
	case "asin":
		return opAsin
	case "acos":
		return opAcos
	case "atan":
		return opAtan
	}
	return opNone
}

var exprPunct = [256]exprOp{'*': opTimes, '/': opDivide, '^': opPow, '=': opEq, '<': opLess, '>': opGreater}

// exprInfix returns the binary operator a word (in lower case) names.
func exprInfix(word string) exprOp {
	switch word {
	case "mod":
		return opMod
	case "fmod":
		return opFmod
	case "div":
		return opDivide
	case "and":
		return opAnd
	case "or":
		return opOr
	case "round":
		return opRound
	case "e":
		return opExponent
	}
	return opNone
}

func exprError(format string, a ...any) error {
	return errors.New("Expression error: " + fmt.Sprintf(format, a...))
}

var errDivZero = exprError("Division by zero.")

// evalExpr evaluates expression s and formats the result as MediaWiki
// does; an empty expression is "".
func evalExpr(s string) (string, error) {
	if len(s) > maxExpr {
		return "", exprError("Expression longer than %d bytes.", maxExpr)
	}
	var operands []float64
	var operators []exprOp
	expectOperand := true
	apply := func(op exprOp) error {
		var err error
		operands, err = exprApply(op, operands)
		return err
	}
	for p := 0; p < len(s); {
		if len(operands) > maxExprStack || len(operators) > maxExprStack {
			return "", exprError("Stack exhausted.")
		}
		c := s[p]
		var op exprOp
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			p++
			continue
		case c >= '0' && c <= '9' || c == '.':
			if !expectOperand {
				return "", exprError("Unexpected number.")
			}
			k := p
			for k < len(s) && (s[k] >= '0' && s[k] <= '9' || s[k] == '.') {
				k++
			}
			operands = append(operands, leadingFloat(s[p:k]))
			p, expectOperand = k, false
			continue
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			k := p
			for k < len(s) && (s[k] >= 'a' && s[k] <= 'z' || s[k] >= 'A' && s[k] <= 'Z') {
				k++
			}
			word := strings.ToLower(s[p:k])
			p = k
			switch {
			case word == "pi" || word == "e" && expectOperand:
				if !expectOperand {
					return "", exprError("Unexpected number.")
				}
				v := math.Pi
				if word == "e" {
					v = math.E
				}
				operands = append(operands, v)
				expectOperand = false
				continue
			case exprPrefix(word) != opNone:
				if !expectOperand {
					return "", exprError("Unexpected %s operator.", word)
				}
				operators = append(operators, exprPrefix(word))
				continue
			case exprInfix(word) != opNone:
				op = exprInfix(word)
			default:
				return "", exprError("Unrecognized word %q.", word)
			}
		case strings.HasPrefix(s[p:], "<="):
			op, p = opLessEq, p+2
		case strings.HasPrefix(s[p:], ">="):
			op, p = opGreaterEq, p+2
		case strings.HasPrefix(s[p:], "<>"), strings.HasPrefix(s[p:], "!="):
			op, p = opNotEq, p+2
		case c == '+' || c == '-':
			p++
			if expectOperand {
				if c == '-' {
					operators = append(operators, opNegative)
				} else {
					operators = append(operators, opPositive)
				}
				continue
			}
			op = opPlus
			if c == '-' {
				op = opMinus
			}
		case c == '(':
			if !expectOperand {
				return "", exprError("Unexpected ( operator.")
			}
			operators = append(operators, opOpen)
			p++
			continue
		case c == ')':
			for len(operators) > 0 && operators[len(operators)-1] != opOpen {
				if err := apply(operators[len(operators)-1]); err != nil {
					return "", err
				}
				operators = operators[:len(operators)-1]
			}
			if len(operators) == 0 {
				return "", exprError("Unexpected closing bracket.")
			}
			operators = operators[:len(operators)-1]
			p, expectOperand = p+1, false
			continue
		default:
			op = exprPunct[c]
			if op == opNone {
				r, _ := utf8.DecodeRuneInString(s[p:])
				return "", exprError("Unrecognized punctuation character %q.", string(r))
			}
			p++
		}
		// A binary operator.
		if expectOperand {
			return "", exprError("Unexpected %s operator.", exprNames[op])
		}
		for len(operators) > 0 && exprPrecedence[op] <= exprPrecedence[operators[len(operators)-1]] {
			if err := apply(operators[len(operators)-1]); err != nil {
				return "", err
			}
			operators = operators[:len(operators)-1]
		}
		operators = append(operators, op)
		expectOperand = true
	}
	for len(operators) > 0 {
		op := operators[len(operators)-1]
		operators = operators[:len(operators)-1]
		if op == opOpen {
			return "", exprError("Unclosed bracket.")
		}
		if err := apply(op); err != nil {
			return "", err
		}
	}
	if len(operands) == 0 {
		return "", nil
	}
	return formatNumber(operands[len(operands)-1]), nil
}

// leadingFloat is PHP's floatval of a run of digits and dots: the longest
// prefix that is a number ("1.2.3" is 1.2, "." is 0).
func leadingFloat(s string) float64 {
	if len(s) <= 15 && strings.IndexByte(s, '.') < 0 {
		// An integer of up to 15 digits is exact as a float.
		var v int64
		for i := 0; i < len(s); i++ {
			v = 10*v + int64(s[i]-'0')
		}
		return float64(v)
	}
	if i := strings.IndexByte(s, '.'); i >= 0 {
		if j := strings.IndexByte(s[i+1:], '.'); j >= 0 {
			s = s[:i+1+j]
		}
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil && v == 0 {
		return 0
	}
	return v
}

func bool01(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// exprApply applies op to the operands on top of the stack.
func exprApply(op exprOp, st []float64) ([]float64, error) {
	if exprPrecedence[op] >= 9 && op != opExponent {
		if len(st) < 1 {
			return st, exprError("Missing operand for %s.", exprNames[op])
		}
		x := &st[len(st)-1]
		v := *x
		switch op {
		case opNegative:
			*x = -v
		case opPositive:
		case opNot:
			*x = bool01(v == 0)
		case opAbs:
			*x = math.Abs(v)
		case opFloor:
			*x = math.Floor(v)
		case opCeil:
			*x = math.Ceil(v)
		case opTrunc:
			*x = math.Trunc(v)
		case opSqrt:
			if v < 0 {
				return st, exprError("Result is not a number.")
			}
			*x = math.Sqrt(v)
		case opExp:
			*x = math.Exp(v)
		case opLn:
			if v <= 0 {
				return st, exprError("Invalid argument for ln: <= 0.")
			}
			*x = math.Log(v)
		case opSin:
			*x = math.Sin(v)
		case opCos:
			*x = math.Cos(v)
		case opTan:
			*x = math.Tan(v)
		case opAsin, opAcos:
			if v < -1 || v > 1 {
				return st, exprError("Invalid argument for %s: < -1 or > 1.", exprNames[op])
			}
			if op == opAsin {
				*x = math.Asin(v)
			} else {
				*x = math.Acos(v)
			}
		case opAtan:
			*x = math.Atan(v)
		}
		return st, nil
	}
	if len(st) < 2 {
		return st, exprError("Missing operand for %s.", exprNames[op])
	}
	l, r := st[len(st)-2], st[len(st)-1]
	st = st[:len(st)-1]
	var v float64
	switch op {
	case opExponent:
		v = l * math.Pow(10, r)
	case opPow:
		v = math.Pow(l, r)
	case opTimes:
		v = l * r
	case opDivide:
		if r == 0 {
			return st, errDivZero
		}
		v = l / r
	case opMod:
		// PHP's % on integers: both truncated, the sign of the dividend.
		l, r = math.Trunc(l), math.Trunc(r)
		if r == 0 || math.IsNaN(r) {
			return st, errDivZero
		}
		v = math.Mod(l, r)
	case opFmod:
		if r == 0 {
			return st, errDivZero
		}
		v = math.Mod(l, r)
	case opPlus:
		v = l + r
	case opMinus:
		v = l - r
	case opRound:
		v = roundDigits(l, r)
	case opEq:
		v = bool01(l == r)
	case opNotEq:
		v = bool01(l != r)
	case opLess:
		v = bool01(l < r)
	case opGreater:
		v = bool01(l > r)
	case opLessEq:
		v = bool01(l <= r)
	case opGreaterEq:
		v = bool01(l >= r)
	case opAnd:
		v = bool01(l != 0 && r != 0)
	case opOr:
		v = bool01(l != 0 || r != 0)
	}
	st[len(st)-1] = v
	return st, nil
}

// roundDigits is PHP's round(x, digits): half away from zero.
func roundDigits(x, digits float64) float64 {
	d := math.Trunc(digits)
	if math.IsNaN(d) || math.IsInf(x, 0) || math.IsNaN(x) {
		return x
	}
	d = max(-400, min(400, d))
	if d >= 0 {
		p := math.Pow(10, d)
		if math.IsInf(x*p, 0) {
			return x
		}
		return math.Round(x*p) / p
	}
	p := math.Pow(10, -d)
	return math.Round(x/p) * p
}

// formatNumber writes v as PHP converts a float to a string (precision
// 14): integers without a decimal point, 1.0E+20 for large and small
// magnitudes, INF and NAN.
func formatNumber(v float64) string {
	switch {
	case math.IsNaN(v):
		return "NAN"
	case math.IsInf(v, 1):
		return "INF"
	case math.IsInf(v, -1):
		return "-INF"
	case v == 0:
		if math.Signbit(v) {
			return "-0"
		}
		return "0"
	}
	s := strconv.FormatFloat(v, 'g', 14, 64)
	mant, exp, ok := strings.Cut(s, "e")
	if !ok {
		return s
	}
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	sign := exp[:1]
	exp = strings.TrimLeft(exp[1:], "0")
	return mant + "E" + sign + exp
}
