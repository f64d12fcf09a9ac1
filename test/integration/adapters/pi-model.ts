/**
 * A scripted model for the pi adapter tests, offline: pi-ai's own faux provider answering each
 * call with the next scripted step (text, tool calls, or both), through pi's stream function types.
 */
import {
  fauxAssistantMessage,
  fauxText,
  fauxToolCall,
  registerFauxProvider,
  type Context,
  type FauxProviderRegistration,
  type Message,
} from "@mariozechner/pi-ai";
import { afterEach } from "vitest";

export interface PiCall {
  id: string;
  name: string;
  args: Record<string, unknown>;
}

export interface PiStep {
  text?: string;
  calls?: PiCall[];
}

/**
 * A factory of scripted models for one test file; each test's providers are unregistered after it.
 * A model answers call N with `steps[N]` (past the end: pi's error message, so a loop longer than
 * scripted fails the test). `seen` records what each call was sent; `faux.state.callCount`
 * counts the calls.
 */
export function useScriptedPiModels() {
  const providers: FauxProviderRegistration[] = [];
  afterEach(() => {
    for (const provider of providers.splice(0)) provider.unregister();
  });
  return (steps: PiStep[]) => {
    const faux = registerFauxProvider({ provider: "scripted" });
    providers.push(faux);
    const seen: { messages: Message[]; tools: string[] }[] = [];
    faux.setResponses(
      steps.map((step) => (context: Context) => {
        seen.push({
          messages: JSON.parse(JSON.stringify(context.messages)) as Message[],
          tools: (context.tools ?? []).map((t) => t.name),
        });
        const calls = (step.calls ?? []).map((c) => fauxToolCall(c.name, c.args, { id: c.id }));
        return fauxAssistantMessage(
          [...(step.text === undefined ? [] : [fauxText(step.text)]), ...calls],
          { stopReason: calls.length > 0 ? "toolUse" : "stop" },
        );
      }),
    );
    return { model: faux.getModel(), seen, faux };
  };
}
