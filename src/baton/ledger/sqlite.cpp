#include "baton/ledger/sqlite.h"

namespace baton {

Database::Database(const std::filesystem::path& path, Mode mode) : path_(path.string()) {
  const int flags =
      mode == Mode::read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
  const int rc = sqlite3_open_v2(path_.c_str(), &db_, flags | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    const std::string message = db_ != nullptr ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    sqlite3_close(db_);
    throw SqliteError("[ledger] cannot open " + path_ + ": " + message, rc);
  }
  sqlite3_busy_timeout(db_, 5000);  // another process reading the ledger is not an error
}

Database::~Database() { sqlite3_close(db_); }

std::int64_t Database::user_version() {
  Statement version(*this, "PRAGMA user_version");
  version.step();
  return version.column_int(0);
}

void Database::exec(std::string_view sql) {
  char* error = nullptr;
  const std::string text(sql);
  const int rc = sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &error);
  if (rc != SQLITE_OK) {
    const std::string message = error != nullptr ? error : sqlite3_errmsg(db_);
    sqlite3_free(error);
    throw SqliteError("[ledger] " + path_ + ": " + message + " in: " + text, rc & 0xff);
  }
}

Statement::Statement(Database& db, std::string_view sql) : db_(db.handle()), sql_(sql) {
  check(sqlite3_prepare_v2(db_, sql_.c_str(), static_cast<int>(sql_.size()), &stmt_, nullptr),
        "prepare");
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

void Statement::check(int rc, const char* what) const {
  if (rc != SQLITE_OK && rc != SQLITE_ROW && rc != SQLITE_DONE) {
    throw SqliteError(
        std::string("[ledger] ") + what + " failed: " + sqlite3_errmsg(db_) + " in: " + sql_,
        rc & 0xff);
  }
}

Statement& Statement::bind(int index, double value) {
  check(sqlite3_bind_double(stmt_, index, value), "bind");
  return *this;
}

Statement& Statement::bind(int index, std::int64_t value) {
  check(sqlite3_bind_int64(stmt_, index, value), "bind");
  return *this;
}

Statement& Statement::bind(int index, std::string_view value) {
  check(sqlite3_bind_text(stmt_, index, value.data(), static_cast<int>(value.size()),
                          SQLITE_TRANSIENT),
        "bind");
  return *this;
}

Statement& Statement::bind_null(int index) {
  check(sqlite3_bind_null(stmt_, index), "bind");
  return *this;
}

bool Statement::step() {
  const int rc = sqlite3_step(stmt_);
  check(rc, "step");
  return rc == SQLITE_ROW;
}

void Statement::run() {
  while (step()) {
  }
  reset();
}

void Statement::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

std::string Statement::column_text(int index) const {
  const auto* text = sqlite3_column_text(stmt_, index);
  return text != nullptr ? reinterpret_cast<const char*>(text) : std::string();
}

}  // namespace baton
