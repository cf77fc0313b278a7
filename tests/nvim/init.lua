-- Headless Neovim drives autograd-lsp like a user: open a file with an AG001 bug, wait for the diagnostic,
-- hover the leaf, request the quick fixes, apply the `torch.no_grad()` one, and wait for the diagnostic to clear.
-- Results go to $AGL_RESULT as JSON; the exit status says how far it got (0: all steps passed).
local result_path = assert(os.getenv("AGL_RESULT"), "AGL_RESULT is not set")
local python = assert(os.getenv("AGL_PYTHON"), "AGL_PYTHON is not set")
local result = { steps = {} }

local function finish(status)
  result.status = status
  local file = assert(io.open(result_path, "w"))
  file:write(vim.fn.json_encode(result))
  file:close()
  if status == 0 then vim.cmd("qall!") else vim.cmd("cquit " .. status) end
end

local function step(name) table.insert(result.steps, name) end

local function start_client(buf)
  local config = {
    name = "autograd-lsp",
    cmd = { python, "-m", "autograd_lsp", "serve" },
    root_dir = vim.fn.getcwd(),
    init_options = { autogradLsp = { confirm = { enabled = true } } },
  }
  if vim.lsp.start then -- Neovim 0.8+: starts (or reuses) and attaches to the current buffer
    return vim.lsp.start(config)
  end
  local id = vim.lsp.start_client(config) -- Neovim 0.7
  vim.lsp.buf_attach_client(buf, id)
  return id
end

local function lsp_diagnostic(d)
  -- the LSP shape of a vim.diagnostic entry, for codeAction's context
  local lsp = (d.user_data and d.user_data.lsp) or {}
  return {
    range = { start = { line = d.lnum, character = d.col }, ["end"] = { line = d.end_lnum, character = d.end_col } },
    message = d.message, severity = d.severity, source = d.source, code = d.code or lsp.code, data = lsp.data,
  }
end

local function run()
  local buf = vim.api.nvim_get_current_buf()
  local client_id = start_client(buf)
  result.nvim = tostring(vim.version().major) .. "." .. tostring(vim.version().minor) .. "." .. tostring(vim.version().patch)

  if not vim.wait(20000, function() return #vim.diagnostic.get(buf) > 0 end, 20) then
    result.error = "no diagnostics"
    return finish(4)
  end
  local diagnostics = vim.diagnostic.get(buf)
  local first = diagnostics[1]
  result.diagnostic = { code = first.code or (first.user_data and first.user_data.lsp and first.user_data.lsp.code),
                        lnum = first.lnum, col = first.col, end_col = first.end_col, message = first.message, source = first.source }
  step("diagnostics")

  local client = vim.lsp.get_client_by_id(client_id)
  local uri = vim.uri_from_bufnr(buf)
  local hover = client.request_sync("textDocument/hover",
    { textDocument = { uri = uri }, position = { line = 1, character = 0 } }, 10000, buf)
  result.hover = hover and hover.result and hover.result.contents and hover.result.contents.value or vim.NIL
  step("hover")

  local line_text = vim.api.nvim_buf_get_lines(buf, first.lnum, first.lnum + 1, false)[1]
  local params = {
    textDocument = { uri = uri },
    range = { start = { line = first.lnum, character = 0 }, ["end"] = { line = first.lnum, character = #line_text } },
    context = { diagnostics = { lsp_diagnostic(first) } },
  }
  local responses = vim.lsp.buf_request_sync(buf, "textDocument/codeAction", params, 10000) or {}
  local chosen
  result.actions = {}
  for _, response in pairs(responses) do
    for _, action in ipairs(response.result or {}) do
      table.insert(result.actions, action.title)
      if not chosen and action.title:find("no_grad", 1, true) then chosen = action end
    end
  end
  if not chosen then
    result.error = "no torch.no_grad() quick fix"
    return finish(5)
  end
  if not chosen.edit and chosen.data then -- lazily resolved action
    local resolved = client.request_sync("codeAction/resolve", chosen, 10000, buf)
    chosen = resolved and resolved.result or chosen
  end
  if not chosen.edit then
    result.error = "the quick fix has no edit"
    return finish(6)
  end
  vim.lsp.util.apply_workspace_edit(chosen.edit, client.offset_encoding)
  step("applied")

  if not vim.wait(20000, function() return #vim.diagnostic.get(buf) == 0 end, 20) then
    result.error = "the diagnostic did not clear"
    result.remaining = #vim.diagnostic.get(buf)
    return finish(7)
  end
  step("cleared")
  result.text = table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n")
  vim.lsp.stop_client(client_id)
  vim.wait(3000, function() return vim.lsp.get_client_by_id(client_id) == nil end, 20)
  return finish(0)
end

vim.api.nvim_create_autocmd("VimEnter", {
  callback = function()
    local ok, err = pcall(run)
    if not ok then
      result.error = tostring(err)
      finish(3)
    end
  end,
})
