/** Browser entry point: mounts the playground into #root and loads the saved environments. */
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { initPlayground } from './init-playground.ts';
import { App } from './App.tsx';
import './styles.css';

const root = document.getElementById('root');
if (!root) throw new Error('index.html has no #root element');
createRoot(root).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
void initPlayground();
