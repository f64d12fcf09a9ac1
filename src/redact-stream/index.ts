export {
  compileStreamRules,
  redactText,
  StreamRedactor,
  type CompiledStreamRules,
} from "./matcher.js";
export {
  checkStreamRule,
  EDGE_RULES,
  LOOK_BEHIND,
  MAX_RULE_WINDOW,
  type StreamRule,
} from "./rules.js";
export { edgeRedactor } from "./edge.js";
export { CUT_MESSAGE, cutText } from "./shown.js";
