/**
 * The actions' own state that is not rendered (stop controllers, pause gates, which run the engine
 * holds, loads in progress): each action module declares its part here instead of in module-level
 * variables, so that tests start from a clean state with `resetActionState()`.
 */

/** One module's part: its factory, and the object the module reads and writes. */
interface Part {
  create(): object;
  state: object;
}

const parts: Part[] = [];

/**
 * Declares an action module's state, made by `create`; returns the one object the module keeps it
 * in. A reset puts fresh values (from `create` again) into that same object, so the module may hold it.
 */
export function actionState<S extends object>(create: () => S): S {
  const state = create();
  parts.push({ create, state });
  return state;
}

/** Gives every module's state its fresh values again (tests: before each case). */
export function resetActionState(): void {
  for (const part of parts) Object.assign(part.state, part.create());
}
