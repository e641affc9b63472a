import { startRuntime } from "ferrule";
const rt = await startRuntime();
