// Derivative-free minimisation (Nelder & Mead 1965, standard coefficients) for the few global
// constants fitted by likelihood, where each trial is a full pass over thousands of matches and
// gradients are not at hand.

export interface Minimum {
  x: number[];
  value: number;
  evaluations: number;
}

export function nelderMead(
  f: (x: number[]) => number,
  start: readonly number[],
  options: { step?: number; maxEvaluations?: number; tolerance?: number } = {},
): Minimum {
  const n = start.length;
  const step = options.step ?? 0.1;
  const maxEvaluations = options.maxEvaluations ?? 200 * n;
  const tolerance = options.tolerance ?? 1e-6;
  let evaluations = 0;
  const evaluate = (x: number[]) => {
    evaluations++;
    return f(x);
  };
  let simplex = [start.slice()];
  for (let i = 0; i < n; i++) {
    const vertex = start.slice();
    vertex[i]! += step;
    simplex.push(vertex);
  }
  let values = simplex.map(evaluate);
  while (evaluations < maxEvaluations) {
    const order = values.map((_, i) => i).sort((a, b) => values[a]! - values[b]!);
    simplex = order.map((i) => simplex[i]!);
    values = order.map((i) => values[i]!);
    if (Math.abs(values[n]! - values[0]!) <= tolerance * (Math.abs(values[0]!) + 1e-12)) break;
    const centroid = new Array<number>(n).fill(0);
    for (let i = 0; i < n; i++) for (let k = 0; k < n; k++) centroid[k]! += simplex[i]![k]! / n;
    const towards = (t: number) => centroid.map((c, k) => c + t * (simplex[n]![k]! - c));
    const reflected = towards(-1);
    const fr = evaluate(reflected);
    if (fr < values[0]!) {
      const expanded = towards(-2);
      const fe = evaluate(expanded);
      [simplex[n], values[n]] = fe < fr ? [expanded, fe] : [reflected, fr];
    } else if (fr < values[n - 1]!) {
      simplex[n] = reflected;
      values[n] = fr;
    } else {
      const contracted = fr < values[n]! ? towards(-0.5) : towards(0.5);
      const fc = evaluate(contracted);
      if (fc < Math.min(fr, values[n]!)) {
        simplex[n] = contracted;
        values[n] = fc;
      } else {
        for (let i = 1; i <= n; i++) {
          simplex[i] = simplex[i]!.map((v, k) => simplex[0]![k]! + 0.5 * (v - simplex[0]![k]!));
          values[i] = evaluate(simplex[i]!);
        }
      }
    }
  }
  const best = values.indexOf(Math.min(...values));
  return { x: simplex[best]!, value: values[best]!, evaluations };
}
