import { defineConfig } from "vite";

// React's JSX through esbuild's automatic runtime (no Babel plugin needed).
export default defineConfig({
  esbuild: { jsx: "automatic" },
  build: { outDir: "dist", emptyOutDir: true, chunkSizeWarningLimit: 1500 },
});
