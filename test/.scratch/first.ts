import { runInjected } from '../bench/campaign-run.js';
const r = await runInjected(20_000, 'until-acknowledged');
console.log(JSON.stringify(r));
